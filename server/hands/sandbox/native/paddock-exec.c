/*
 * paddock-exec: a sandboxed hand's resident executor (native-executor.ts speaks to it).
 *
 * It runs inside the hand's bubblewrap and does filesystem primitives and commands on request,
 * so every path and link resolves in the sandbox's own mount namespace, never the host's. The
 * tool rules (confinement, limits, the words the model reads) stay in the launcher, in Node.
 *
 * Wire (stdin requests, stdout replies), every frame: u32 len (LE, of what follows), u32 id, u8 op,
 * payload. Requests: 'S' stat / 'L' lstat / 'P' realpath / 'K' readlink / 'D' readdir / 'M' mkdir -p
 * (payload: a path); 'R' read (u64 offset, u64 max, path); 'W' write (u32 path length, path,
 * bytes: parents made, then open O_TRUNC|O_CREAT as Node's writeFile); 'X' spawn (NUL-ended
 * strings: cwd, script, then env entries "N=V" set, "=N" copied from our own env if set);
 * 'T' kill (u32 id of a spawn: SIGKILL to its process group).
 * Replies: 'r' (i32 errno, then data: stat = u8 kind + u64 size; readdir = (u8 kind, name NUL)*);
 * for a spawn: 'r' (errno), then 'o'/'e' output chunks and 'x' (i32 wait status) after exit and
 * a short drain. 'h' (id 0, our pid) once at start. stdin's end kills every group we started.
 * Arguments are ignored (the launcher names the hand's workspace there, for ps).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_FRAME (96u << 20)
#define MAX_KIDS 64
#define MAX_GROUPS 1024
#define DRAIN_MS 100
extern char **environ;

struct kid {
  uint32_t id;
  pid_t pid;
  int fd[2]; /* stdout, stderr; -1 once closed */
  int exited, status;
  long long deadline; /* drain end, ms */
};
static struct kid kids[MAX_KIDS];
static int nkids;
static pid_t groups[MAX_GROUPS];
static int ngroups;

static long long now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Out of memory: nothing sensible is left to do; the launcher sees the hand lost. */
static void *xrealloc(void *p, size_t n) {
  void *q = realloc(p, n);
  if (!q) _exit(3);
  return q;
}

static void put32(unsigned char *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i)); }
static uint32_t get32(const unsigned char *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t get64(const unsigned char *p) { return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32; }

static void write_all(const void *buf, size_t n) {
  const char *p = buf;
  while (n > 0) {
    ssize_t w = write(1, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && errno == EAGAIN) { struct pollfd pf = {1, POLLOUT, 0}; poll(&pf, 1, -1); continue; }
    if (w <= 0) _exit(0); /* our reader is gone */
    p += w, n -= (size_t)w;
  }
}

/* One reply: head (id, op, optional errno) then up to two data parts. */
static void reply(uint32_t id, char op, int has_err, int32_t err, const void *a, size_t na, const void *b, size_t nb) {
  unsigned char h[13];
  size_t nh = 9 + (has_err ? 4 : 0);
  put32(h, (uint32_t)(nh - 4 + na + nb));
  put32(h + 4, id);
  h[8] = (unsigned char)op;
  if (has_err) put32(h + 9, (uint32_t)err);
  write_all(h, nh);
  if (na) write_all(a, na);
  if (nb) write_all(b, nb);
}
static void ok(uint32_t id, const void *a, size_t na) { reply(id, 'r', 1, 0, a, na, NULL, 0); }
static void fail(uint32_t id, int e) { reply(id, 'r', 1, e, NULL, 0, NULL, 0); }

static unsigned char kind_of(mode_t m) { return S_ISREG(m) ? 'f' : S_ISDIR(m) ? 'd' : S_ISLNK(m) ? 'l' : 'o'; }

static void do_stat(uint32_t id, const char *p, int follow) {
  struct stat st;
  if ((follow ? stat(p, &st) : lstat(p, &st)) < 0) return fail(id, errno);
  unsigned char b[9];
  b[0] = kind_of(st.st_mode);
  put32(b + 1, (uint32_t)st.st_size);
  put32(b + 5, (uint32_t)((uint64_t)st.st_size >> 32));
  ok(id, b, 9);
}

static void do_read(uint32_t id, uint64_t off, uint64_t max, const char *p) {
  int fd = open(p, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(id, errno);
  struct stat st;
  if (fstat(fd, &st) < 0) { int e = errno; close(fd); return fail(id, e); }
  if (S_ISDIR(st.st_mode)) { close(fd); return fail(id, EISDIR); }
  size_t cap = 65536, n = 0;
  if (max > MAX_FRAME - 64) max = MAX_FRAME - 64;
  char *buf = xrealloc(NULL, cap);
  for (;;) {
    if (n == cap) { cap *= 2; buf = xrealloc(buf, cap); }
    size_t want = cap - n;
    if (want > max - n) want = max - n;
    if (want == 0) break;
    ssize_t r = pread(fd, buf + n, want, (off_t)(off + n));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) { int e = errno; free(buf); close(fd); return fail(id, e); }
    if (r == 0) break;
    n += (size_t)r;
  }
  close(fd);
  ok(id, buf, n);
  free(buf);
}

static int mkdir_p(char *p) {
  for (char *s = p + 1; *s; s++) {
    if (*s != '/') continue;
    *s = 0;
    int r = mkdir(p, 0777);
    *s = '/';
    if (r < 0 && errno != EEXIST) return -1;
  }
  if (mkdir(p, 0777) < 0 && errno != EEXIST) return -1;
  struct stat st;
  if (stat(p, &st) < 0) return -1;
  if (!S_ISDIR(st.st_mode)) { errno = ENOTDIR; return -1; }
  return 0;
}

static void do_write(uint32_t id, const unsigned char *pl, size_t n) {
  if (n < 4) return fail(id, EINVAL);
  uint32_t pn = get32(pl);
  if (pn == 0 || pn > n - 4 || pn >= PATH_MAX) return fail(id, EINVAL);
  char path[PATH_MAX];
  memcpy(path, pl + 4, pn);
  path[pn] = 0;
  char *slash = strrchr(path, '/');
  if (slash && slash != path) {
    *slash = 0;
    if (mkdir_p(path) < 0) return fail(id, errno);
    *slash = '/';
  }
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) return fail(id, errno);
  const unsigned char *d = pl + 4 + pn;
  size_t left = n - 4 - pn;
  while (left > 0) {
    ssize_t w = write(fd, d, left);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) { int e = errno; close(fd); return fail(id, e); }
    d += w, left -= (size_t)w;
  }
  if (close(fd) < 0) return fail(id, errno);
  ok(id, NULL, 0);
}

static void do_readdir(uint32_t id, const char *p) {
  DIR *d = opendir(p);
  if (!d) return fail(id, errno);
  size_t cap = 4096, n = 0;
  char *buf = xrealloc(NULL, cap);
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    size_t len = strlen(e->d_name);
    while (n + len + 2 > cap) { cap *= 2; buf = xrealloc(buf, cap); }
    unsigned char k = 'o';
    if (e->d_type == DT_UNKNOWN) {
      struct stat st;
      if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) k = kind_of(st.st_mode);
    } else k = e->d_type == DT_REG ? 'f' : e->d_type == DT_DIR ? 'd' : e->d_type == DT_LNK ? 'l' : 'o';
    buf[n++] = (char)k;
    memcpy(buf + n, e->d_name, len + 1);
    n += len + 1;
  }
  closedir(d);
  ok(id, buf, n);
  free(buf);
}

static void do_spawn(uint32_t id, char *pl, size_t n) {
  if (n == 0 || pl[n - 1] != 0) return fail(id, EINVAL);
  char *cwd = pl, *script = cwd + strlen(cwd) + 1;
  if (script >= pl + n || nkids == MAX_KIDS) return fail(id, script >= pl + n ? EINVAL : EAGAIN);
  char *envs = script + strlen(script) + 1;
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) < 0) return fail(id, errno);
  if (pipe2(err, O_CLOEXEC) < 0) { int e = errno; close(out[0]), close(out[1]); return fail(id, e); }
  pid_t pid = fork();
  if (pid < 0) { int e = errno; close(out[0]), close(out[1]), close(err[0]), close(err[1]); return fail(id, e); }
  if (pid == 0) {
    sigset_t all;
    sigemptyset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);
    setpgid(0, 0);
    int nul = open("/dev/null", O_RDONLY);
    dup2(nul >= 0 ? nul : 0, 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    /* The environment: only what the request names (our own, copied by name, or set). */
    char **env = calloc(256, sizeof *env);
    int ne = 0;
    for (char *s = envs; s < pl + n && ne < 255; s += strlen(s) + 1) {
      const char *entry = s;
      if (s[0] == '=') {
        const char *v = getenv(s + 1);
        if (!v) continue;
        char *kv = malloc(strlen(s) + strlen(v) + 2);
        sprintf(kv, "%s=%s", s + 1, v);
        entry = kv;
      }
      size_t klen = strcspn(entry, "=");
      int j;
      for (j = 0; j < ne && !(strncmp(env[j], entry, klen) == 0 && env[j][klen] == '='); j++) ;
      env[j] = (char *)entry;
      if (j == ne) ne++;
    }
    if (chdir(cwd) < 0) { dprintf(2, "bash: could not start /bin/bash: cannot enter %s: %s\n", cwd, strerror(errno)); _exit(127); }
    char *argv[] = {"/bin/bash", "-c", script, NULL};
    execve("/bin/bash", argv, env);
    dprintf(2, "bash: could not start /bin/bash: %s\n", strerror(errno));
    _exit(127);
  }
  setpgid(pid, pid); /* both sides: no race with a kill right after */
  close(out[1]), close(err[1]);
  fcntl(out[0], F_SETFL, O_NONBLOCK);
  fcntl(err[0], F_SETFL, O_NONBLOCK);
  kids[nkids++] = (struct kid){id, pid, {out[0], err[0]}, 0, 0, 0};
  if (ngroups < MAX_GROUPS) groups[ngroups++] = pid;
  ok(id, NULL, 0);
}

static void kill_all(void) {
  for (int i = 0; i < ngroups; i++) kill(-groups[i], SIGKILL);
}

static void finish_kid(int i) {
  struct kid *k = &kids[i];
  for (int j = 0; j < 2; j++) if (k->fd[j] >= 0) close(k->fd[j]);
  unsigned char b[4];
  put32(b, (uint32_t)k->status);
  reply(k->id, 'x', 0, 0, b, 4, NULL, 0);
  kids[i] = kids[--nkids];
}

static void drain_fd(struct kid *k, int j) {
  char buf[65536];
  for (;;) {
    ssize_t r = read(k->fd[j], buf, sizeof buf);
    if (r > 0) { reply(k->id, j ? 'e' : 'o', 0, 0, buf, (size_t)r, NULL, 0); continue; }
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && errno == EAGAIN) return;
    close(k->fd[j]);
    k->fd[j] = -1;
    return;
  }
}

static void handle(unsigned char *f, size_t n) {
  if (n < 5) _exit(2);
  uint32_t id = get32(f);
  char op = (char)f[4];
  unsigned char *pl = f + 5;
  size_t pn = n - 5;
  if (op == 'W') return do_write(id, pl, pn);
  if (op == 'X') return do_spawn(id, (char *)pl, pn);
  if (op == 'T') {
    if (pn < 4) return;
    uint32_t target = get32(pl);
    for (int i = 0; i < nkids; i++) if (kids[i].id == target) kill(-kids[i].pid, SIGKILL);
    return;
  }
  if (op == 'R') {
    if (pn < 17 || pl[pn - 1] != 0) return fail(id, EINVAL);
    return do_read(id, get64(pl), get64(pl + 8), (char *)pl + 16);
  }
  if (pn == 0 || pl[pn - 1] != 0) return fail(id, EINVAL);
  char *p = (char *)pl;
  if (strlen(p) != pn - 1) return fail(id, EINVAL);
  char out[PATH_MAX];
  switch (op) {
    case 'S': return do_stat(id, p, 1);
    case 'L': return do_stat(id, p, 0);
    case 'D': return do_readdir(id, p);
    case 'M': return mkdir_p(p) < 0 ? fail(id, errno) : ok(id, NULL, 0);
    case 'P': return realpath(p, out) ? ok(id, out, strlen(out)) : fail(id, errno);
    case 'K': {
      ssize_t r = readlink(p, out, sizeof out);
      return r < 0 ? fail(id, errno) : ok(id, out, (size_t)r);
    }
    default: return fail(id, ENOSYS);
  }
}

int main(void) {
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigaddset(&chld, SIGPIPE);
  sigprocmask(SIG_BLOCK, &chld, NULL);
  sigdelset(&chld, SIGPIPE);
  int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  fcntl(0, F_SETFL, O_NONBLOCK);
  unsigned char pid[4];
  put32(pid, (uint32_t)getpid());
  reply(0, 'h', 0, 0, pid, 4, NULL, 0);

  size_t cap = 1 << 16, have = 0;
  unsigned char *in = xrealloc(NULL, cap);
  int in_open = 1;
  while (in_open || nkids > 0) {
    struct pollfd pf[2 + 2 * MAX_KIDS];
    int np = 0;
    pf[np++] = (struct pollfd){in_open ? 0 : -1, POLLIN, 0};
    pf[np++] = (struct pollfd){sfd, POLLIN, 0};
    long long now = now_ms(), wait = -1;
    for (int i = 0; i < nkids; i++) {
      for (int j = 0; j < 2; j++) pf[np++] = (struct pollfd){kids[i].fd[j], POLLIN, 0};
      if (kids[i].exited) { long long w = kids[i].deadline - now; if (w < 0) w = 0; if (wait < 0 || w < wait) wait = w; }
    }
    if (poll(pf, (nfds_t)np, (int)wait) < 0 && errno != EINTR) _exit(1);
    for (int i = 0; i < nkids; i++)
      for (int j = 0; j < 2; j++) if (kids[i].fd[j] >= 0 && pf[2 + 2 * i + j].revents) drain_fd(&kids[i], j);
    if (pf[1].revents) {
      struct signalfd_siginfo si;
      while (read(sfd, &si, sizeof si) > 0) ;
      int st;
      pid_t p;
      while ((p = waitpid(-1, &st, WNOHANG)) > 0)
        for (int i = 0; i < nkids; i++) if (kids[i].pid == p) kids[i].exited = 1, kids[i].status = st, kids[i].deadline = now_ms() + DRAIN_MS;
    }
    now = now_ms();
    for (int i = nkids - 1; i >= 0; i--)
      if (kids[i].exited && ((kids[i].fd[0] < 0 && kids[i].fd[1] < 0) || now >= kids[i].deadline)) finish_kid(i);
    if (in_open && pf[0].revents) {
      for (;;) {
        if (have == cap) { cap *= 2; in = xrealloc(in, cap); }
        ssize_t r = read(0, in + have, cap - have);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && errno == EAGAIN) break;
        if (r <= 0) { in_open = 0; kill_all(); break; }
        have += (size_t)r;
      }
      size_t at = 0;
      while (have - at >= 4) {
        uint32_t len = get32(in + at);
        if (len > MAX_FRAME) _exit(2);
        if (have - at - 4 < len) { if (len + 4 > cap) { cap = len + 4; in = xrealloc(in, cap); } break; }
        handle(in + at + 4, len);
        at += 4 + len;
      }
      memmove(in, in + at, have - at);
      have -= at;
    }
  }
  kill_all();
  return 0;
}
