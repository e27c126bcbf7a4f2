import { describe, expect, it } from 'vitest';
import { deniedAddressClass, isIpLiteral, parseIPv6 } from '~/lib/ip-address';

describe('ip addresses', () => {
  it('names the class of every non-public IPv4 address and lets public ones through', () => {
    expect(deniedAddressClass('127.0.0.1')).toBe('a loopback address');
    expect(deniedAddressClass('127.255.0.9')).toBe('a loopback address');
    expect(deniedAddressClass('10.1.2.3')).toBe('a private address');
    expect(deniedAddressClass('172.16.0.1')).toBe('a private address');
    expect(deniedAddressClass('172.31.255.255')).toBe('a private address');
    expect(deniedAddressClass('192.168.1.1')).toBe('a private address');
    expect(deniedAddressClass('100.64.0.1')).toBe('a private address');
    expect(deniedAddressClass('169.254.169.254')).toBe('a link-local address');
    expect(deniedAddressClass('0.0.0.0')).toBe('an unspecified address');
    expect(deniedAddressClass('224.0.0.1')).toBe('a multicast address');
    expect(deniedAddressClass('255.255.255.255')).toBe('a reserved address');
    for (const pub of ['8.8.8.8', '172.32.0.1', '172.15.255.255', '100.128.0.1', '1.1.1.1']) expect(deniedAddressClass(pub)).toBeNull();
  });

  it('names the class of non-public IPv6 addresses, judging one that carries an IPv4 address by it', () => {
    expect(deniedAddressClass('::1')).toBe('a loopback address');
    expect(deniedAddressClass('[::1]')).toBe('a loopback address');
    expect(deniedAddressClass('::')).toBe('an unspecified address');
    expect(deniedAddressClass('fd12:3456::1')).toBe('a unique-local address');
    expect(deniedAddressClass('fe80::1%eth0')).toBe('a link-local address');
    expect(deniedAddressClass('ff02::1')).toBe('a multicast address');
    // v4-mapped in both spellings, NAT64 and 6to4
    expect(deniedAddressClass('::ffff:127.0.0.1')).toBe('a loopback address');
    expect(deniedAddressClass('::ffff:7f00:1')).toBe('a loopback address');
    expect(deniedAddressClass('::ffff:a9fe:a9fe')).toBe('a link-local address');
    expect(deniedAddressClass('64:ff9b::10.0.0.1')).toBe('a private address');
    expect(deniedAddressClass('2002:c0a8:0101::1')).toBe('a private address');
    expect(deniedAddressClass('2606:4700:4700::1111')).toBeNull();
    expect(deniedAddressClass('::ffff:8.8.8.8')).toBeNull();
  });

  it('refuses what is not an address, and parses only well-formed literals', () => {
    expect(deniedAddressClass('example.com')).toBe('an unparsable address');
    expect(isIpLiteral('127.1')).toBe(false);
    expect(isIpLiteral('1.2.3.256')).toBe(false);
    expect(isIpLiteral('01.2.3.4')).toBe(false);
    expect(isIpLiteral('1:2:3:4:5:6:7:8')).toBe(true);
    expect(isIpLiteral('1:2:3:4:5:6:7:8:9')).toBe(false);
    expect(isIpLiteral('1::2::3')).toBe(false);
    expect(parseIPv6('::ffff:1.2.3.4')?.slice(10)).toEqual([0xff, 0xff, 1, 2, 3, 4]);
  });
});
