// SPDX-License-Identifier: GPL-2.0
/*
 * loadgen: guest load generators for irqrig scenarios.  Runs each --kind
 * with --workers processes for --duration seconds and prints ONE JSON line:
 *   {"tool":"loadgen","kinds":[...],"duration_s":X,"workers":N,
 *    "ops":{"fork":N,...},["ipi_method":M,]["detail":{KIND:{SUB:N,...}},]
 *    "unavailable":{WHAT:"why",...},"errors":E,"interrupted":false}
 *
 * fork   fork + exec /bin/true (or _exit without it), wait
 * pipe   one-byte ping-pong between two processes (ops: round trips)
 * timer  short clock_nanosleep() and timerfd wakeups (ops: wakeups)
 * ipi    membarrier(PRIVATE_EXPEDITED), or mprotect() flips of a page that
 *        threads on the other CPUs keep touching (TLB shootdowns)
 * mem    mmap, touch every page, munmap 4 MiB (ops: chunks)
 * io     write + fsync + read 64 KiB of a file under /tmp (ops: rounds)
 * exec   fork + execve of loadgen itself with --noop (exits at once), else
 *        of /bin/true; every execve goes through start_thread() (ops: execs;
 *        detail: which program)
 * signal kill() SIGUSR1 to a partner process that takes it in a handler
 *        (delivery + rt_sigreturn) and answers with sigqueue() SIGRTMIN,
 *        received with rt_sigtimedwait(); plus a raise()d SIGUSR2 handled
 *        by the sender (ops: round trips)
 * futex  two threads ping-pong on a futex word (FUTEX_WAIT/FUTEX_WAKE), and
 *        two threads contend for a FUTEX_LOCK_PI/FUTEX_UNLOCK_PI lock when
 *        the kernel has PI futexes (ops: round trips + lock/unlock pairs)
 * fault  mmap 256 KiB, read- then write-fault every page, mprotect() it
 *        read-only and back, MADV_DONTNEED half and fault it again, munmap;
 *        threads on the other CPUs keep the mm live so that the flushes
 *        are TLB shootdown IPIs (ops: rounds; detail: minor faults)
 * fsgs   x86-64: wrgsbase/rdgsbase and rdfsbase/wrfsbase when the CPU and
 *        kernel allow them (AT_HWCAP2 HWCAP2_FSGSBASE), and
 *        arch_prctl(ARCH_SET_GS/ARCH_GET_GS); each write is checked by a
 *        read back and a %gs-relative load (ops: rounds)
 *
 * A kind, or a part of one, that the kernel or CPU lacks (a tinyconfig
 * kernel may have no PI futexes or madvise()) runs what it can and says what
 * it skipped in "unavailable" ("futex" for a whole kind, "futex.lock_pi" for
 * a part); that is not an error unless no selected kind could run at all.
 *
 * At the end of the run (or on SIGINT/SIGTERM) the workers stop after
 * their current operation; one still busy after the stop grace is killed
 * and named in "failures" with every worker that failed, as
 * "KIND.WORKER: what happened".  The grace is GRACE_OPS times the longest
 * operation any worker finished (at least GRACE_S, at most MAX_GRACE_S): a
 * guest slowed ~75x took ~100 s for one exec, and a worker killed inside it
 * is a slow guest, not a failed load.
 *
 * Exit status: 0 ok, 1 runtime error (or nothing could run), 2 usage error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdnoreturn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#ifdef __x86_64__
#include <asm/prctl.h>
#endif

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define MAX_WORKERS	64
#define MAX_DURATION_S	86400.0
#define GRACE_S		3.0
#define GRACE_OPS	2.0
#define MAX_GRACE_S	300.0
#define FAILURES_LEN	1024	/* of the "failures" list in the JSON line */
#define MEM_CHUNK	(4UL << 20)
#define IO_SIZE		(64UL << 10)
#define TIMER_SLEEP_NS	50000
#define TIMERFD_NS	100000
#define FAULT_PAGES	64
#define FUTEX_WAIT_NS	50000000	/* re-check the stop flag this often */
#define PI_HOLD_SPINS	200		/* make the other PI thread block */
/*
 * A partner silent longer is dead.  Not 1 s: in a guest slowed ~75x (one
 * instruction per TB) on a busy host, a starved partner took longer, also
 * on stock kernels (results/20261207-050001-campaign-random).
 */
#define SIGNAL_REPLY_S	10
/* After that, how much longer to wait to tell a late reply from a lost one. */
#define SIGNAL_LATE_S	60
#define NOOP_ARG	"--noop"	/* hidden: exit at once (for exec) */
#define WHY_LEN		96

#ifndef HWCAP2_FSGSBASE
#define HWCAP2_FSGSBASE	(1 << 1)
#endif

enum kind {
	K_FORK, K_PIPE, K_TIMER, K_IPI, K_MEM, K_IO,
	K_EXEC, K_SIGNAL, K_FUTEX, K_FAULT, K_FSGS, NR_KINDS
};

static const char *const kind_names[NR_KINDS] = {
	"fork", "pipe", "timer", "ipi", "mem", "io",
	"exec", "signal", "futex", "fault", "fsgs",
};

/* Finer counts, reported under "detail" for the kinds that have them. */
enum sub {
	S_EXEC_SELF, S_EXEC_TRUE,
	S_SIG_KILL, S_SIG_TIMEDWAIT, S_SIG_RAISE,
	S_FUTEX_WAKE, S_FUTEX_PI,
	S_FAULT_MINFLT, S_FAULT_MPROTECT, S_FAULT_MADVISE,
	S_FSGS_INSN, S_FSGS_PRCTL,
	NR_SUBS
};

static const struct {
	enum kind kind;
	const char *name;
} subs[NR_SUBS] = {
	[S_EXEC_SELF] = { K_EXEC, "self" },
	[S_EXEC_TRUE] = { K_EXEC, "bin_true" },
	[S_SIG_KILL] = { K_SIGNAL, "kill_handled" },
	[S_SIG_TIMEDWAIT] = { K_SIGNAL, "sigqueue_timedwait" },
	[S_SIG_RAISE] = { K_SIGNAL, "raise_handled" },
	[S_FUTEX_WAKE] = { K_FUTEX, "wait_wake" },
	[S_FUTEX_PI] = { K_FUTEX, "lock_pi" },
	[S_FAULT_MINFLT] = { K_FAULT, "minflt" },
	[S_FAULT_MPROTECT] = { K_FAULT, "mprotect" },
	[S_FAULT_MADVISE] = { K_FAULT, "madvise" },
	[S_FSGS_INSN] = { K_FSGS, "insn" },
	[S_FSGS_PRCTL] = { K_FSGS, "arch_prctl" },
};

/* Why a kind (or a part of one) did not run; the first writer wins. */
struct why {
	int claimed;
	char text[WHY_LEN];
};

enum ipi_method { IPI_AUTO, IPI_EXPEDITED, IPI_GLOBAL, IPI_MPROTECT };

static const char *const ipi_names[] = {
	"auto", "membarrier-expedited", "membarrier-global", "mprotect",
};

/* Shared between the parent and all workers (MAP_SHARED). */
struct shared {
	int stop;
	int ipi_used;			/* enum ipi_method actually used */
	unsigned long long ops[NR_KINDS][MAX_WORKERS];
	unsigned long long sub[NR_SUBS][MAX_WORKERS];
	long long last_op_ns[NR_KINDS][MAX_WORKERS];	/* its start, or last op's end */
	long long longest_op_ns[NR_KINDS][MAX_WORKERS];
	struct why kind_why[NR_KINDS];
	struct why sub_why[NR_SUBS];
};

static struct shared *sh;
static double end_time;
static int interrupted;		/* set from a signal handler */
static char self_exe[4096];	/* this program, for exec; "" if unknown */

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static double now_s(void)
{
	return now_ns() / 1e9;
}

static int should_stop(void)
{
	return __atomic_load_n(&sh->stop, __ATOMIC_RELAXED) || now_s() >= end_time;
}

/* One operation done: count it and how long it took (for the stop grace). */
static void count(enum kind k, int w)
{
	long long t = now_ns();
	long long took = t - __atomic_load_n(&sh->last_op_ns[k][w], __ATOMIC_RELAXED);

	if (took > __atomic_load_n(&sh->longest_op_ns[k][w], __ATOMIC_RELAXED))
		__atomic_store_n(&sh->longest_op_ns[k][w], took, __ATOMIC_RELAXED);
	__atomic_store_n(&sh->last_op_ns[k][w], t, __ATOMIC_RELAXED);
	__atomic_fetch_add(&sh->ops[k][w], 1, __ATOMIC_RELAXED);
}

static void count_sub(enum sub s, int w, unsigned long long n)
{
	__atomic_fetch_add(&sh->sub[s][w], n, __ATOMIC_RELAXED);
}

static void warn_errno(const char *what)
{
	fprintf(stderr, "loadgen: %s: %s\n", what, strerror(errno));
}

static void set_why(struct why *why, const char *what, const char *reason)
{
	if (__atomic_exchange_n(&why->claimed, 1, __ATOMIC_RELAXED))
		return;
	snprintf(why->text, sizeof(why->text), "%s: %s", what, reason);
}

/* The whole kind cannot run here: say why, and it is not an error. */
static int kind_unavailable(enum kind k, const char *what, const char *reason)
{
	set_why(&sh->kind_why[k], what, reason);
	return 0;
}

static void sub_unavailable(enum sub s, const char *what, const char *reason)
{
	set_why(&sh->sub_why[s], what, reason);
}

/* fork */

static int run_fork(int w)
{
	int have_true = access("/bin/true", X_OK) == 0;
	char *const args[] = { "true", NULL };

	while (!should_stop()) {
		pid_t pid = fork();

		if (pid < 0) {
			if (errno == EAGAIN)
				continue;
			warn_errno("fork");
			return 1;
		}
		if (!pid) {
			if (have_true)
				execv("/bin/true", args);
			_exit(0);
		}
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		count(K_FORK, w);
	}
	return 0;
}

/* pipe */

static int run_pipe(int w)
{
	int ping[2], pong[2];
	char c = 'x';
	pid_t pid;

	if (pipe(ping) || pipe(pong)) {
		warn_errno("pipe");
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		warn_errno("fork");
		return 1;
	}
	if (!pid) {
		/* echo until the other end closes */
		close(ping[1]);
		close(pong[0]);
		while (read(ping[0], &c, 1) == 1)
			if (write(pong[1], &c, 1) != 1)
				break;
		_exit(0);
	}
	close(ping[0]);
	close(pong[1]);
	while (!should_stop()) {
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1) {
			if (errno == EINTR)
				continue;
			warn_errno("pipe ping-pong");
			break;
		}
		count(K_PIPE, w);
	}
	close(ping[1]);
	close(pong[0]);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return 0;
}

/* timer */

static int run_timer(int w)
{
	struct itimerspec its = {
		.it_interval = { 0, TIMERFD_NS },
		.it_value = { 0, TIMERFD_NS },
	};
	struct timespec ts = { 0, TIMER_SLEEP_NS };
	unsigned long long expirations;
	int fd;

	fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (fd < 0 || timerfd_settime(fd, 0, &its, NULL)) {
		warn_errno("timerfd");
		return 1;
	}
	while (!should_stop()) {
		if (!clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL))
			count(K_TIMER, w);
		if (read(fd, &expirations, sizeof(expirations)) == sizeof(expirations))
			count(K_TIMER, w);
	}
	close(fd);
	return 0;
}

/* ipi */

struct ipi_ctx {
	char *page;
	int cpu;			/* -1: do not pin */
	int stop;
};

static void pin_self(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);	/* best effort */
}

/* Keep this mm live on another CPU so that flushes/barriers IPI it. */
static void *ipi_helper(void *arg)
{
	struct ipi_ctx *ctx = arg;
	unsigned long sum = 0;

	pin_self(ctx->cpu);
	while (!__atomic_load_n(&ctx->stop, __ATOMIC_RELAXED))
		sum += __atomic_load_n(&ctx->page[sum & 4095], __ATOMIC_RELAXED);
	return (void *)sum;
}

struct helpers {
	struct ipi_ctx ctx[MAX_WORKERS];
	pthread_t th[MAX_WORKERS];
	int n;
};

/*
 * Pin worker @w to a CPU and start a thread touching @page on each other
 * CPU (at least @min threads, unpinned on a single CPU).
 */
static int start_helpers(struct helpers *h, char *page, int w, int min)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int want = ncpu > 1 ? ncpu - 1 : min;
	int self = ncpu > 1 ? w % ncpu : -1;

	if (want > MAX_WORKERS)
		want = MAX_WORKERS;
	pin_self(self);
	for (h->n = 0; h->n < want; h->n++) {
		struct ipi_ctx *ctx = &h->ctx[h->n];

		ctx->page = page;
		ctx->cpu = ncpu > 1 ? (self + 1 + h->n) % ncpu : -1;
		ctx->stop = 0;
		if (pthread_create(&h->th[h->n], NULL, ipi_helper, ctx)) {
			fprintf(stderr, "loadgen: pthread_create failed\n");
			return 1;
		}
	}
	return 0;
}

static void stop_helpers(struct helpers *h)
{
	int i;

	for (i = 0; i < h->n; i++) {
		__atomic_store_n(&h->ctx[i].stop, 1, __ATOMIC_RELAXED);
		pthread_join(h->th[i], NULL);
	}
	h->n = 0;
}

static long membarrier(int cmd)
{
	return syscall(__NR_membarrier, cmd, 0, 0);
}

static enum ipi_method ipi_choose(enum ipi_method want)
{
	long mask = membarrier(MEMBARRIER_CMD_QUERY);

	if (mask < 0)
		mask = 0;
	if (want == IPI_AUTO || want == IPI_EXPEDITED) {
		if ((mask & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
		    !membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED))
			return IPI_EXPEDITED;
		if (want == IPI_EXPEDITED)
			fprintf(stderr, "loadgen: no expedited membarrier, using mprotect\n");
		return IPI_MPROTECT;
	}
	if (want == IPI_GLOBAL && !(mask & MEMBARRIER_CMD_GLOBAL)) {
		fprintf(stderr, "loadgen: membarrier global unavailable, using mprotect\n");
		return IPI_MPROTECT;
	}
	return want;
}

static int run_ipi(int w, enum ipi_method want)
{
	static struct helpers h;
	enum ipi_method m;
	char *page;
	int ret;

	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED) {
		warn_errno("mmap");
		return 1;
	}
	memset(page, 1, 4096);
	m = ipi_choose(want);
	__atomic_store_n(&sh->ipi_used, m, __ATOMIC_RELAXED);
	ret = start_helpers(&h, page, w, 1);
	while (!ret && !should_stop()) {
		switch (m) {
		case IPI_EXPEDITED:
			ret = membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) ? 1 : 0;
			break;
		case IPI_GLOBAL:
			ret = membarrier(MEMBARRIER_CMD_GLOBAL) ? 1 : 0;
			break;
		default:
			ret = mprotect(page, 4096, PROT_READ) ||
			      mprotect(page, 4096, PROT_READ | PROT_WRITE) ? 1 : 0;
			break;
		}
		if (ret)
			warn_errno(ipi_names[m]);
		else
			count(K_IPI, w);
	}
	stop_helpers(&h);
	munmap(page, 4096);
	return ret;
}

/* mem */

static int run_mem(int w)
{
	long pagesz = sysconf(_SC_PAGESIZE);

	while (!should_stop()) {
		char *p = mmap(NULL, MEM_CHUNK, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		size_t off;

		if (p == MAP_FAILED) {
			warn_errno("mmap");
			return 1;
		}
		for (off = 0; off < MEM_CHUNK; off += pagesz)
			p[off] = (char)off;
		munmap(p, MEM_CHUNK);
		count(K_MEM, w);
	}
	return 0;
}

/* io */

static int run_io(int w)
{
	static char wbuf[IO_SIZE], rbuf[IO_SIZE];
	char path[64];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "/tmp/loadgen.%d.%d", (int)getpid(), w);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		warn_errno(path);
		return 1;
	}
	memset(wbuf, 'a' + w % 26, sizeof(wbuf));
	while (!should_stop()) {
		if (pwrite(fd, wbuf, sizeof(wbuf), 0) != (ssize_t)sizeof(wbuf) ||
		    fsync(fd) ||
		    pread(fd, rbuf, sizeof(rbuf), 0) != (ssize_t)sizeof(rbuf)) {
			warn_errno(path);
			ret = 1;
			break;
		}
		count(K_IO, w);
	}
	close(fd);
	unlink(path);
	return ret;
}

/* exec */

/* fork + execve, wait: the exit status, 128 + signal, or -1 (errno set) */
static int spawn_wait(const char *path, char *const args[])
{
	int status;
	pid_t pid;

	do
		pid = fork();
	while (pid < 0 && errno == EAGAIN && !should_stop());
	if (pid < 0)
		return -1;
	if (!pid) {
		execve(path, args, environ);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int run_exec(int w)
{
	char *const self_args[] = { "loadgen", NOOP_ARG, NULL };
	char *const true_args[] = { "true", NULL };
	const char *path = "/bin/true";
	char *const *args = true_args;
	enum sub s = S_EXEC_TRUE;
	int rc = -1;

	/* the first program that runs: loadgen --noop, else /bin/true */
	if (self_exe[0]) {
		rc = spawn_wait(self_exe, self_args);
		if (!rc) {
			path = self_exe;
			args = self_args;
			s = S_EXEC_SELF;
		}
	}
	if (rc)
		rc = spawn_wait(path, args);
	if (rc < 0) {
		warn_errno("fork");
		return 1;
	}
	if (rc)
		return kind_unavailable(K_EXEC, "execve",
					self_exe[0] ? "loadgen --noop and /bin/true failed" :
					"no path to loadgen, /bin/true failed");
	count(K_EXEC, w);
	count_sub(s, w, 1);
	while (!should_stop()) {
		rc = spawn_wait(path, args);
		if (rc < 0) {
			warn_errno("fork");
			return 1;
		}
		if (rc) {
			fprintf(stderr, "loadgen: exec: %s exited with %d\n", path, rc);
			return 1;
		}
		count(K_EXEC, w);
		count_sub(s, w, 1);
	}
	return 0;
}

/* signal */

static int sig_worker;		/* this process's worker index, for handlers */

static void on_counted_signal(int sig)
{
	count_sub(sig == SIGUSR1 ? S_SIG_KILL : S_SIG_RAISE, sig_worker, 1);
}

/*
 * What a silent partner is doing: its run state (R: runnable, starved; S:
 * asleep) and its pending and blocked signals.  Asleep in sigsuspend()
 * with SIGUSR1 pending is a lost wakeup; runnable is a CPU it never got.
 */
static void signal_partner_state(pid_t pid, char *buf, size_t len)
{
	char path[64], line[256];
	size_t used = 0;
	FILE *f;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f) {
		snprintf(buf, len, "%s: %s", path, strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f) && used < len) {
		if (!strncmp(line, "State:", 6) || !strncmp(line, "SigPnd:", 7) ||
		    !strncmp(line, "ShdPnd:", 7) || !strncmp(line, "SigBlk:", 7) ||
		    !strncmp(line, "voluntary_ctxt_switches:", 24)) {
			line[strcspn(line, "\n")] = 0;
			used += snprintf(buf + used, len - used, "%s%s",
					 used ? ", " : "", line);
		}
	}
	fclose(f);
}

/*
 * The partner did not answer in SIGNAL_REPLY_S: say what it is doing and
 * whether the reply comes late or never.  Reading its state may itself
 * wait long for a CPU, so the read is timed and the reply looked for
 * right after it.
 */
static void signal_silent_partner(pid_t pid, const sigset_t *rt, int err)
{
	struct timespec late = { SIGNAL_LATE_S, 0 };
	double t0 = now_s(), t1;
	char state[320], after[64];
	sigset_t pend;
	siginfo_t si;
	int sig;

	signal_partner_state(pid, state, sizeof(state));
	t1 = now_s();
	if (!sigpending(&pend) && sigismember(&pend, SIGRTMIN)) {
		snprintf(after, sizeof(after), "the reply was pending by then");
	} else {
		do
			sig = sigtimedwait(rt, &si, &late);
		while (sig < 0 && errno == EINTR);
		if (sig < 0)
			snprintf(after, sizeof(after), "no reply in %d s more", SIGNAL_LATE_S);
		else
			snprintf(after, sizeof(after), "the reply came %.1f s after that",
				 now_s() - t1);
	}
	fprintf(stderr, "loadgen: signal: no reply from the partner in %d s (%s); %.1f s later partner %s; %s\n",
		SIGNAL_REPLY_S, strerror(err), t1 - t0, state, after);
}

/* Answer each SIGUSR1 (taken in the handler) with a numbered SIGRTMIN. */
static noreturn void signal_partner(pid_t parent, const sigset_t *waitmask)
{
	union sigval v;
	int seq = 0;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(0);
	for (;;) {
		sigsuspend(waitmask);
		v.sival_int = seq++;
		if (sigqueue(parent, SIGRTMIN, v))
			_exit(1);
	}
}

static int run_signal(int w)
{
	struct timespec timeout = { SIGNAL_REPLY_S, 0 };
	sigset_t block, waitmask, rt;
	pid_t parent = getpid(), pid;
	struct sigaction sa;
	int sig, seq = 0, ret = 0;
	siginfo_t si;

	sig_worker = w;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_counted_signal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) || sigaction(SIGUSR2, &sa, NULL)) {
		warn_errno("sigaction");
		return 1;
	}
	/* both blocked outside sigsuspend()/sigtimedwait(): none is lost */
	sigemptyset(&rt);
	sigaddset(&rt, SIGRTMIN);
	block = rt;
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, &waitmask);
	pid = fork();
	if (pid < 0) {
		warn_errno("fork");
		return 1;
	}
	if (!pid)
		signal_partner(parent, &waitmask);
	while (!should_stop()) {
		if (kill(pid, SIGUSR1)) {
			warn_errno("kill");
			ret = 1;
			break;
		}
		do
			sig = sigtimedwait(&rt, &si, &timeout);
		while (sig < 0 && errno == EINTR);
		if (sig < 0) {
			signal_silent_partner(pid, &rt, errno);
			ret = 1;
			break;
		}
		if (si.si_code != SI_QUEUE || si.si_pid != pid || si.si_value.sival_int != seq) {
			fprintf(stderr, "loadgen: signal: reply %d (code %d) from %d, expected %d from %d\n",
				si.si_value.sival_int, si.si_code, (int)si.si_pid, seq, (int)pid);
			ret = 1;
			break;
		}
		seq++;
		count_sub(S_SIG_TIMEDWAIT, w, 1);
		if (raise(SIGUSR2)) {
			warn_errno("raise");
			ret = 1;
			break;
		}
		count(K_SIGNAL, w);
	}
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return ret;
}

/* futex */

struct futex_ctx {
	int turn;		/* ping-pong: whose turn, 0 or 1 */
	int pi_lock;		/* PI futex word: owner tid | FUTEX_WAITERS */
	int pi_owner;		/* who is in the PI critical section */
	int stop;
	int err;
	int w;
};

static long futex(int *uaddr, int op, int val, const struct timespec *ts)
{
	return syscall(SYS_futex, uaddr, op, val, ts, NULL, 0);
}

static void futex_fail(struct futex_ctx *ctx)
{
	__atomic_store_n(&ctx->err, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&ctx->stop, 1, __ATOMIC_RELEASE);
	futex(&ctx->turn, FUTEX_WAKE_PRIVATE, 2, NULL);
}

/* One side of the ping-pong; side 0 decides when to stop. */
static void futex_pingpong(struct futex_ctx *ctx, int side)
{
	struct timespec ts = { 0, FUTEX_WAIT_NS };

	for (;;) {
		int t = __atomic_load_n(&ctx->turn, __ATOMIC_ACQUIRE);

		if (__atomic_load_n(&ctx->stop, __ATOMIC_ACQUIRE))
			return;
		if (!side && should_stop()) {
			__atomic_store_n(&ctx->stop, 1, __ATOMIC_RELEASE);
			futex(&ctx->turn, FUTEX_WAKE_PRIVATE, 1, NULL);
			return;
		}
		if (t != side) {
			if (futex(&ctx->turn, FUTEX_WAIT_PRIVATE, t, &ts) && errno != EAGAIN &&
			    errno != ETIMEDOUT && errno != EINTR) {
				warn_errno("FUTEX_WAIT");
				futex_fail(ctx);
				return;
			}
			continue;
		}
		__atomic_store_n(&ctx->turn, !side, __ATOMIC_RELEASE);
		if (futex(&ctx->turn, FUTEX_WAKE_PRIVATE, 1, NULL) < 0) {
			warn_errno("FUTEX_WAKE");
			futex_fail(ctx);
			return;
		}
		if (!side) {
			count(K_FUTEX, ctx->w);
			count_sub(S_FUTEX_WAKE, ctx->w, 1);
		}
	}
}

static void *futex_side1(void *arg)
{
	futex_pingpong(arg, 1);
	return NULL;
}

/* Take the PI lock (in the kernel every time), hold it a while, drop it. */
static void *futex_pi_thread(void *arg)
{
	struct futex_ctx *ctx = arg;
	int tid = (int)syscall(SYS_gettid);
	volatile int spin;
	int word;

	while (!__atomic_load_n(&ctx->stop, __ATOMIC_ACQUIRE)) {
		if (futex(&ctx->pi_lock, FUTEX_LOCK_PI_PRIVATE, 0, NULL)) {
			warn_errno("FUTEX_LOCK_PI");
			futex_fail(ctx);
			break;
		}
		word = __atomic_load_n(&ctx->pi_lock, __ATOMIC_RELAXED);
		__atomic_store_n(&ctx->pi_owner, tid, __ATOMIC_RELAXED);
		for (spin = 0; spin < PI_HOLD_SPINS; spin++)
			;
		if ((word & FUTEX_TID_MASK) != tid ||
		    __atomic_load_n(&ctx->pi_owner, __ATOMIC_RELAXED) != tid) {
			fprintf(stderr, "loadgen: FUTEX_LOCK_PI: thread %d got word %#x, owner %d\n",
				tid, (unsigned int)word, ctx->pi_owner);
			futex_fail(ctx);
			futex(&ctx->pi_lock, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL);
			break;
		}
		if (futex(&ctx->pi_lock, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL)) {
			warn_errno("FUTEX_UNLOCK_PI");
			futex_fail(ctx);
			break;
		}
		count(K_FUTEX, ctx->w);
		count_sub(S_FUTEX_PI, ctx->w, 1);
	}
	return NULL;
}

static int run_futex(int w)
{
	static struct futex_ctx ctx;
	pthread_t th[3];
	int i, n = 0, nr_pi = 2, probe = 0;

	ctx.w = w;
	if (futex(&probe, FUTEX_WAKE_PRIVATE, 1, NULL) < 0) {
		if (errno == ENOSYS)
			return kind_unavailable(K_FUTEX, "FUTEX_WAKE", strerror(errno));
		warn_errno("FUTEX_WAKE");
		return 1;
	}
	if (futex(&ctx.pi_lock, FUTEX_LOCK_PI_PRIVATE, 0, NULL)) {
		if (errno != ENOSYS) {
			warn_errno("FUTEX_LOCK_PI");
			return 1;
		}
		sub_unavailable(S_FUTEX_PI, "FUTEX_LOCK_PI", strerror(errno));
		nr_pi = 0;
	} else if (futex(&ctx.pi_lock, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL)) {
		warn_errno("FUTEX_UNLOCK_PI");
		return 1;
	}
	if (pthread_create(&th[n], NULL, futex_side1, &ctx))
		goto fail;
	for (n++; n <= nr_pi; n++)
		if (pthread_create(&th[n], NULL, futex_pi_thread, &ctx))
			goto fail;
	futex_pingpong(&ctx, 0);
	goto join;
fail:
	fprintf(stderr, "loadgen: pthread_create failed\n");
	futex_fail(&ctx);
join:
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return ctx.err;
}

/* fault */

static int run_fault(int w)
{
	static struct helpers h;
	long pagesz = sysconf(_SC_PAGESIZE);
	size_t len = FAULT_PAGES * pagesz, off;
	struct rusage before, after;
	unsigned int round = 0;
	int madv = 1, ret;
	char *stable;

	stable = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (stable == MAP_FAILED) {
		warn_errno("mmap");
		return 1;
	}
	memset(stable, 1, 4096);
	ret = start_helpers(&h, stable, w, 0);
	getrusage(RUSAGE_SELF, &before);
	while (!ret && !should_stop()) {
		volatile unsigned char *p;
		unsigned char tag = (unsigned char)(round * 7 + 1);
		unsigned int sum = 0;

		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			warn_errno("mmap");
			ret = 1;
			break;
		}
		for (off = 0; off < len; off += pagesz)		/* read faults */
			sum += p[off];
		for (off = 0; off < len; off += pagesz)		/* write faults */
			p[off] = (unsigned char)(tag + off / pagesz);
		if (mprotect((void *)p, len, PROT_READ)) {
			warn_errno("mprotect");
			ret = 1;
		}
		for (off = 0; !ret && off < len; off += pagesz)
			if (p[off] != (unsigned char)(tag + off / pagesz))
				break;
		if (!ret && (sum || off < len)) {
			fprintf(stderr, "loadgen: fault: fresh pages sum to %u, page %zu of %zu reads back wrong\n",
				sum, off / pagesz, len / pagesz);
			ret = 1;
		}
		if (!ret && mprotect((void *)p, len, PROT_READ | PROT_WRITE)) {
			warn_errno("mprotect");
			ret = 1;
		}
		if (!ret)
			count_sub(S_FAULT_MPROTECT, w, 2);
		if (!ret && madv) {
			/* the zapped half reads zeros, and faults again */
			if (!madvise((void *)p, len / 2, MADV_DONTNEED)) {
				for (off = 0; off < len / 2; off += pagesz)
					sum += p[off];
				for (off = 0; off < len / 2; off += pagesz)
					p[off] = tag;
				if (sum) {
					fprintf(stderr, "loadgen: fault: MADV_DONTNEED pages are not zero\n");
					ret = 1;
				}
				count_sub(S_FAULT_MADVISE, w, 1);
			} else if (errno == ENOSYS) {
				sub_unavailable(S_FAULT_MADVISE, "madvise", strerror(errno));
				madv = 0;
			} else {
				warn_errno("madvise");
				ret = 1;
			}
		}
		munmap((void *)p, len);
		if (!ret)
			count(K_FAULT, w);
		round++;
	}
	getrusage(RUSAGE_SELF, &after);
	count_sub(S_FAULT_MINFLT, w, (unsigned long long)(after.ru_minflt - before.ru_minflt));
	stop_helpers(&h);
	munmap(stable, 4096);
	return ret;
}

/* fsgs */

#ifdef __x86_64__
static unsigned long rdgsbase(void)
{
	unsigned long v;

	__asm__ volatile("rdgsbase %0" : "=r"(v));
	return v;
}

static void wrgsbase(unsigned long v)
{
	__asm__ volatile("wrgsbase %0" : : "r"(v) : "memory");
}

static unsigned long rdfsbase(void)
{
	unsigned long v;

	__asm__ volatile("rdfsbase %0" : "=r"(v));
	return v;
}

static void wrfsbase(unsigned long v)
{
	__asm__ volatile("wrfsbase %0" : : "r"(v) : "memory");
}

/* The long at %gs:0, i.e. where the GS base really points */
static unsigned long gs_load(void)
{
	unsigned long v;

	__asm__ volatile("movq %%gs:0, %0" : "=r"(v) : : "memory");
	return v;
}

static long arch_prctl(int code, unsigned long addr)
{
	return syscall(SYS_arch_prctl, code, addr);
}

static int gs_check(const char *after, unsigned long *slot, unsigned long base)
{
	unsigned long val = gs_load();

	if (base == (unsigned long)slot && val == *slot)
		return 0;
	fprintf(stderr, "loadgen: fsgs: after %s: GS base %#lx (expected %#lx), %%gs:0 %#lx (expected %#lx)\n",
		after, base, (unsigned long)slot, val, *slot);
	return 1;
}

static int run_fsgs(int w)
{
	int insn = (getauxval(AT_HWCAP2) & HWCAP2_FSGSBASE) != 0;
	unsigned long slot[2], base, fs, fs2, i = 0;
	int prctl_ok = 1, ret = 0;
	const char *prctl_err = "";

	if (!insn)
		sub_unavailable(S_FSGS_INSN, "HWCAP2_FSGSBASE", "not set (CPU or kernel)");
	if (arch_prctl(ARCH_GET_GS, (unsigned long)&base)) {
		prctl_err = strerror(errno);
		sub_unavailable(S_FSGS_PRCTL, "ARCH_GET_GS", prctl_err);
		prctl_ok = 0;
	}
	if (!insn && !prctl_ok)
		return kind_unavailable(K_FSGS, "no HWCAP2_FSGSBASE, ARCH_GET_GS", prctl_err);
	while (!ret && !should_stop()) {
		slot[0] = (i << 8) | (unsigned long)w;
		slot[1] = ~slot[0];
		if (insn) {
			wrgsbase((unsigned long)&slot[0]);
			ret |= gs_check("wrgsbase", &slot[0], rdgsbase());
			/* the FS base is libc's TLS: write back what is there */
			fs = rdfsbase();
			wrfsbase(fs);
			fs2 = rdfsbase();
			if (fs2 != fs) {
				fprintf(stderr, "loadgen: fsgs: FS base %#lx, wrote %#lx\n", fs2, fs);
				ret = 1;
			}
			count(K_FSGS, w);
			count_sub(S_FSGS_INSN, w, 1);
		}
		if (prctl_ok && !ret) {
			if (arch_prctl(ARCH_SET_GS, (unsigned long)&slot[1]) ||
			    arch_prctl(ARCH_GET_GS, (unsigned long)&base)) {
				warn_errno("arch_prctl");
				ret = 1;
				break;
			}
			ret |= gs_check("ARCH_SET_GS", &slot[1], base);
			if (insn)
				ret |= gs_check("ARCH_SET_GS (rdgsbase)", &slot[1], rdgsbase());
			if (insn && (arch_prctl(ARCH_GET_FS, (unsigned long)&fs) || fs != rdfsbase())) {
				fprintf(stderr, "loadgen: fsgs: ARCH_GET_FS %#lx, rdfsbase %#lx\n",
					fs, rdfsbase());
				ret = 1;
			}
			count(K_FSGS, w);
			count_sub(S_FSGS_PRCTL, w, 1);
		}
		i++;
	}
	if (insn)
		wrgsbase(0);
	else
		arch_prctl(ARCH_SET_GS, 0);
	return ret;
}
#else
static int run_fsgs(int w)
{
	(void)w;
	return kind_unavailable(K_FSGS, "fsgs", "not x86-64");
}
#endif

/* main */

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: loadgen --kind KIND[,KIND...] [--kind ...] --duration SECONDS [--workers N]\n"
		"  --kind KIND         fork|pipe|timer|ipi|mem|io|exec|signal|futex|fault|fsgs\n"
		"                      (repeatable or comma list)\n"
		"  --duration SECONDS  how long, > 0 and <= %.0f (required)\n"
		"  --workers N         processes per kind, 1..%d (default 1)\n"
		"  --ipi-method M      auto|membarrier-expedited|membarrier-global|mprotect\n"
		"                      (default auto: expedited membarrier, else mprotect)\n"
		"Prints one JSON line on stdout; what the kernel or CPU lacks is listed under\n"
		"\"unavailable\".  Exit: 0 ok, 1 runtime error (or no kind could run), 2 usage.\n",
		MAX_DURATION_S, MAX_WORKERS);
}

/* A macro, so that the compiler checks the format against fprintf() */
#define usage_error(...) do {					\
		fprintf(stderr, "%s: ", "loadgen");	\
		fprintf(stderr, __VA_ARGS__);				\
		usage_exit();						\
	} while (0)

static noreturn void usage_exit(void)
{
	fprintf(stderr, "\n");
	print_usage(stderr);
	exit(2);
}

static unsigned int parse_kinds(const char *arg, unsigned int mask)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int k;

	if (!copy)
		usage_error("out of memory");
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (k = 0; k < NR_KINDS; k++)
			if (!strcmp(tok, kind_names[k]))
				break;
		if (k == NR_KINDS)
			usage_error("--kind: unknown kind '%s'", tok);
		mask |= 1u << k;
	}
	free(copy);
	return mask;
}

static void on_signal(int sig)
{
	(void)sig;
	__atomic_store_n(&interrupted, 1, __ATOMIC_RELAXED);
}

/* A worker, for the failure list. */
struct who {
	enum kind kind;
	int worker;
	int late;		/* still running after the stop grace: killed */
	double op_s;		/* then, how long its operation had run */
};

/* The "failures" list: JSON strings, comma-separated; what does not fit is counted. */
struct failures {
	char text[FAILURES_LEN];
	size_t len;
	int omitted;		/* the list ends in "(more)" */
};

static void __attribute__((format(printf, 2, 3)))
add_failure(struct failures *f, const char *fmt, ...)
{
	/* keep room for the last item: ,"(more)" */
	size_t room = sizeof(f->text) - f->len - 16;
	char item[160];
	va_list ap;
	int n;

	va_start(ap, fmt);
	vsnprintf(item, sizeof(item), fmt, ap);
	va_end(ap);
	fprintf(stderr, "loadgen: %s\n", item);
	if (f->omitted)
		return;
	n = snprintf(f->text + f->len, room, "%s\"%s\"", f->len ? "," : "", item);
	if (n < 0 || (size_t)n >= room) {
		snprintf(f->text + f->len, sizeof(f->text) - f->len, "%s\"(more)\"",
			 f->len ? "," : "");
		f->omitted = 1;
		return;
	}
	f->len += n;
}

/*
 * How long workers may take to stop: GRACE_OPS times the longest operation
 * any of them finished, within [GRACE_S, MAX_GRACE_S].
 */
static double stop_grace_s(int workers)
{
	long long longest = 0;
	double grace;
	int k, w;

	for (k = 0; k < NR_KINDS; k++)
		for (w = 0; w < workers; w++) {
			long long ns = __atomic_load_n(&sh->longest_op_ns[k][w], __ATOMIC_RELAXED);

			if (ns > longest)
				longest = ns;
		}
	grace = GRACE_OPS * longest / 1e9;
	return grace < GRACE_S ? GRACE_S : grace > MAX_GRACE_S ? MAX_GRACE_S : grace;
}

/* How long the worker's current operation has run. */
static double op_running_s(const struct who *who)
{
	return (now_ns() - __atomic_load_n(&sh->last_op_ns[who->kind][who->worker],
					   __ATOMIC_RELAXED)) / 1e9;
}

/* A worker ended: a failure (named in the list) unless it exited 0. */
static int worker_failed(struct failures *f, const struct who *who, int status,
			 double grace)
{
	const char *kn = kind_names[who->kind];
	int w = who->worker;

	if (who->late && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
		add_failure(f, "%s.%d: killed at the end of the stop grace (%.1f s), %.1f s into an operation (longest before %.1f s)",
			    kn, w, grace, who->op_s,
			    __atomic_load_n(&sh->longest_op_ns[who->kind][w],
					    __ATOMIC_RELAXED) / 1e9);
		return 1;
	}
	if (WIFSIGNALED(status)) {
		add_failure(f, "%s.%d: killed by signal %d", kn, w, WTERMSIG(status));
		return 1;
	}
	if (WEXITSTATUS(status)) {
		add_failure(f, "%s.%d: exit status %d", kn, w, WEXITSTATUS(status));
		return 1;
	}
	return 0;
}

static int worker(enum kind k, int w, enum ipi_method ipi)
{
	setpgid(0, 0);		/* the parent can kill us with our children */
	signal(SIGINT, SIG_IGN);	/* the parent decides when to stop */
	signal(SIGTERM, SIG_DFL);
	switch (k) {
	case K_FORK:
		return run_fork(w);
	case K_PIPE:
		return run_pipe(w);
	case K_TIMER:
		return run_timer(w);
	case K_IPI:
		return run_ipi(w, ipi);
	case K_MEM:
		return run_mem(w);
	case K_IO:
		return run_io(w);
	case K_EXEC:
		return run_exec(w);
	case K_SIGNAL:
		return run_signal(w);
	case K_FUTEX:
		return run_futex(w);
	case K_FAULT:
		return run_fault(w);
	case K_FSGS:
		return run_fsgs(w);
	default:
		return 1;
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "kind", required_argument, NULL, 'k' },
		{ "duration", required_argument, NULL, 'd' },
		{ "workers", required_argument, NULL, 'w' },
		{ "ipi-method", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	pid_t pids[NR_KINDS * MAX_WORKERS];
	struct who who[NR_KINDS * MAX_WORKERS];
	enum ipi_method ipi = IPI_AUTO;
	unsigned int kinds = 0;
	double duration = 0, start, elapsed, stop_time, grace = 0;
	int c, k, w, s, workers = 1, npids = 0, errors = 0, running, first, ran = 0;
	int killed = 0;
	struct failures fails = { .len = 0 };
	struct sigaction sa;
	char out[4096 + FAILURES_LEN];
	ssize_t n;
	size_t len;
	char *end;

	/* the exec kind's program: exit at once, before anything else */
	if (argc == 2 && !strcmp(argv[1], NOOP_ARG))
		return 0;
	while ((c = getopt_long(argc, argv, "k:d:w:h", opts, NULL)) != -1) {
		switch (c) {
		case 'k':
			kinds = parse_kinds(optarg, kinds);
			break;
		case 'd':
			errno = 0;
			duration = strtod(optarg, &end);
			if (errno || *end || !*optarg || !(duration > 0) ||
			    duration > MAX_DURATION_S)
				usage_error("--duration: not in (0, %.0f] seconds: '%s'",
					    MAX_DURATION_S, optarg);
			break;
		case 'w':
			errno = 0;
			workers = (int)strtol(optarg, &end, 10);
			if (errno || *end || !*optarg || workers < 1 || workers > MAX_WORKERS)
				usage_error("--workers: not a number in 1..%d: '%s'",
					    MAX_WORKERS, optarg);
			break;
		case 'i':
			for (k = 0; k < (int)ARRAY_SIZE(ipi_names); k++)
				if (!strcmp(optarg, ipi_names[k]))
					break;
			if (k == (int)ARRAY_SIZE(ipi_names))
				usage_error("--ipi-method: unknown method '%s'", optarg);
			ipi = (enum ipi_method)k;
			break;
		case 'h':
			print_usage(stdout);
			return 0;
		default:
			print_usage(stderr);
			return 2;
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (!kinds)
		usage_error("--kind is required");
	if (!duration)
		usage_error("--duration is required");

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		warn_errno("mmap");
		return 1;
	}
	memset(sh, 0, sizeof(*sh));
	sh->ipi_used = ipi;
	n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	if (n > 0)
		self_exe[n] = 0;
	else if (strchr(argv[0], '/') && strlen(argv[0]) < sizeof(self_exe))
		strcpy(self_exe, argv[0]);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	fflush(NULL);

	start = now_s();
	end_time = start + duration;
	for (k = 0; k < NR_KINDS; k++) {
		if (!(kinds & (1u << k)))
			continue;
		for (w = 0; w < workers; w++) {
			pid_t pid;

			__atomic_store_n(&sh->last_op_ns[k][w], now_ns(), __ATOMIC_RELAXED);
			pid = fork();
			if (pid < 0) {
				warn_errno("fork");
				add_failure(&fails, "%s.%d: fork: %s", kind_names[k], w,
					    strerror(errno));
				errors++;
				continue;
			}
			if (!pid)
				_exit(worker((enum kind)k, w, ipi));
			who[npids] = (struct who){ (enum kind)k, w, 0, 0 };
			pids[npids++] = pid;
		}
	}

	/* wait for the workers; after the stop grace, kill what is left */
	running = npids;
	stop_time = end_time;
	while (running) {
		int status;
		pid_t pid;
		double t = now_s();

		if (__atomic_load_n(&interrupted, __ATOMIC_RELAXED) && t < stop_time) {
			stop_time = t;
			__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
		}
		if (t > stop_time) {
			grace = stop_grace_s(workers);
			if (!killed && t > stop_time + grace) {
				for (w = 0; w < npids; w++)
					if (pids[w] > 0) {
						who[w].late = 1;
						who[w].op_s = op_running_s(&who[w]);
						kill(-pids[w], SIGKILL);
					}
				killed = 1;
			}
		}
		pid = waitpid(-1, &status, WNOHANG);
		if (pid > 0) {
			for (w = 0; w < npids; w++) {
				if (pids[w] != pid)
					continue;
				pids[w] = 0;
				running--;
				if (worker_failed(&fails, &who[w], status, grace))
					errors++;
			}
			continue;
		}
		if (pid < 0 && errno != EINTR)
			break;
		usleep(20000);
	}
	elapsed = now_s() - start;

	len = snprintf(out, sizeof(out), "{\"tool\":\"loadgen\",\"kinds\":[");
	first = 1;
	for (k = 0; k < NR_KINDS; k++) {
		if (!(kinds & (1u << k)))
			continue;
		len += snprintf(out + len, sizeof(out) - len, "%s\"%s\"",
				first ? "" : ",", kind_names[k]);
		first = 0;
	}
	len += snprintf(out + len, sizeof(out) - len,
			"],\"duration_s\":%.3f,\"workers\":%d,\"ops\":{", elapsed, workers);
	first = 1;
	for (k = 0; k < NR_KINDS; k++) {
		unsigned long long total = 0;

		if (!(kinds & (1u << k)))
			continue;
		for (w = 0; w < workers; w++)
			total += sh->ops[k][w];
		len += snprintf(out + len, sizeof(out) - len, "%s\"%s\":%llu",
				first ? "" : ",", kind_names[k], total);
		first = 0;
	}
	len += snprintf(out + len, sizeof(out) - len, "}");
	if (kinds & (1u << K_IPI))
		len += snprintf(out + len, sizeof(out) - len, ",\"ipi_method\":\"%s\"",
				ipi_names[sh->ipi_used]);
	/* "detail":{KIND:{SUB:N,...},...} for the selected kinds that have subs */
	first = 1;
	for (k = 0; k < NR_KINDS; k++) {
		int first_sub = 1;

		if (!(kinds & (1u << k)))
			continue;
		for (s = 0; s < NR_SUBS; s++) {
			unsigned long long total = 0;

			if (subs[s].kind != (enum kind)k)
				continue;
			for (w = 0; w < workers; w++)
				total += sh->sub[s][w];
			if (first_sub)
				len += snprintf(out + len, sizeof(out) - len, "%s\"%s\":{",
						first ? ",\"detail\":{" : "},", kind_names[k]);
			len += snprintf(out + len, sizeof(out) - len, "%s\"%s\":%llu",
					first_sub ? "" : ",", subs[s].name, total);
			first = 0;
			first_sub = 0;
		}
	}
	len += snprintf(out + len, sizeof(out) - len, "%s,\"unavailable\":{", first ? "" : "}}");
	first = 1;
	for (k = 0; k < NR_KINDS; k++) {
		if (!(kinds & (1u << k)))
			continue;
		if (sh->kind_why[k].claimed) {
			len += snprintf(out + len, sizeof(out) - len, "%s\"%s\":\"%s\"",
					first ? "" : ",", kind_names[k], sh->kind_why[k].text);
			first = 0;
			continue;
		}
		ran = 1;
		for (s = 0; s < NR_SUBS; s++) {
			if (subs[s].kind != (enum kind)k || !sh->sub_why[s].claimed)
				continue;
			len += snprintf(out + len, sizeof(out) - len, "%s\"%s.%s\":\"%s\"",
					first ? "" : ",", kind_names[k], subs[s].name,
					sh->sub_why[s].text);
			first = 0;
		}
	}
	len += snprintf(out + len, sizeof(out) - len,
			"},\"errors\":%d,\"failures\":[%s],\"stop_grace_s\":%.1f,\"interrupted\":%s}\n",
			errors, fails.text, grace, interrupted ? "true" : "false");
	if (len >= sizeof(out))
		len = sizeof(out) - 1;
	/* one write: the line must not be split by other console output */
	if (write(STDOUT_FILENO, out, len) != (ssize_t)len)
		perror("loadgen: write");
	return errors || interrupted || !ran ? 1 : 0;
}
