/*
 * Paddock docs widget loader. Add to a page:
 *   <script src="https://paddock.example/embed.js" data-agent="agent_…" async></script>
 * Optional: data-theme="light|dark" (default: follows the page), data-label="Ask the docs".
 * A launcher button opens a chat panel: an iframe of /embed/<agent> on the Paddock server.
 * Defines one global, window.PaddockWidget ({ open, close, toggle }).
 */
(function () {
  'use strict';
  if (window.PaddockWidget) return;
  var script = document.currentScript;
  if (!script || !script.src) return;
  var agent = script.getAttribute('data-agent') || '';
  if (!/^agent_[A-Za-z0-9]{1,64}$/.test(agent)) return;
  var server = new URL(script.src).origin;
  var forced = script.getAttribute('data-theme');
  var label = script.getAttribute('data-label') || 'Ask a question';
  var dark = window.matchMedia ? window.matchMedia('(prefers-color-scheme: dark)') : null;

  // The host's scheme: the script's data-theme, else the page's own data-theme or color-scheme, else the system's.
  function theme() {
    if (forced === 'light' || forced === 'dark') return forced;
    var root = document.documentElement;
    var own = root.getAttribute('data-theme') || root.style.colorScheme || '';
    if (/dark/.test(own)) return 'dark';
    if (/light/.test(own)) return 'light';
    return dark && dark.matches ? 'dark' : 'light';
  }

  var button = document.createElement('button');
  var panel = document.createElement('div');
  var frame = null;
  var isOpen = false;

  button.type = 'button';
  button.textContent = label;
  button.setAttribute('aria-expanded', 'false');
  button.setAttribute('aria-controls', 'paddock-widget-panel');
  button.setAttribute('data-paddock-launcher', '');
  panel.id = 'paddock-widget-panel';
  panel.setAttribute('role', 'dialog');
  panel.setAttribute('aria-label', label);
  panel.hidden = true;

  function style() {
    var t = theme();
    var narrow = window.innerWidth <= 480;
    button.style.cssText =
      'position:fixed;right:20px;bottom:20px;z-index:2147483000;padding:10px 16px;border-radius:999px;border:0;cursor:pointer;' +
      'font:600 14px/1.2 system-ui,sans-serif;box-shadow:0 4px 16px rgba(0,0,0,.25);' +
      (t === 'dark' ? 'background:#e08462;color:#14161b;' : 'background:#b8532f;color:#fff;');
    panel.style.cssText =
      'position:fixed;z-index:2147483001;overflow:hidden;box-shadow:0 8px 32px rgba(0,0,0,.3);' +
      (narrow ? 'inset:0;border-radius:0;' : 'right:20px;bottom:76px;width:min(400px,calc(100vw - 40px));height:min(600px,calc(100vh - 100px));border-radius:12px;') +
      (t === 'dark' ? 'background:#14161b;' : 'background:#fff;');
    panel.hidden = !isOpen;
  }

  function send(message) {
    if (frame && frame.contentWindow) frame.contentWindow.postMessage(message, server);
  }

  function open() {
    if (!frame) {
      frame = document.createElement('iframe');
      frame.title = label;
      frame.src = server + '/embed/' + agent + '?origin=' + encodeURIComponent(location.origin) + '&theme=' + theme();
      frame.style.cssText = 'border:0;width:100%;height:100%;display:block;';
      frame.addEventListener('load', function () {
        if (isOpen) send({ type: 'paddock:focus' });
      });
      panel.appendChild(frame);
    }
    isOpen = true;
    button.setAttribute('aria-expanded', 'true');
    style();
    frame.focus();
    send({ type: 'paddock:focus' });
  }

  function close() {
    if (!isOpen) return;
    isOpen = false;
    button.setAttribute('aria-expanded', 'false');
    style();
    button.focus();
  }

  button.addEventListener('click', function () {
    if (isOpen) close();
    else open();
  });
  document.addEventListener('keydown', function (e) {
    if (e.key === 'Escape' && isOpen) close();
  });
  // From the frame: Escape or its close button; ready for input.
  window.addEventListener('message', function (e) {
    if (e.origin !== server || !frame || e.source !== frame.contentWindow || !e.data) return;
    if (e.data.type === 'paddock:close') close();
    if (e.data.type === 'paddock:ready' && isOpen) send({ type: 'paddock:focus' });
  });
  function retheme() {
    style();
    send({ type: 'paddock:theme', theme: theme() });
  }
  if (dark && dark.addEventListener) dark.addEventListener('change', retheme);
  if (window.MutationObserver) new MutationObserver(retheme).observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme', 'style', 'class'] });
  window.addEventListener('resize', style);

  function mount() {
    style();
    document.body.appendChild(panel);
    document.body.appendChild(button);
  }
  if (document.body) mount();
  else document.addEventListener('DOMContentLoaded', mount);

  window.PaddockWidget = { open: open, close: close, toggle: function () { if (isOpen) close(); else open(); } };
})();
