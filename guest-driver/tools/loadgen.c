// SPDX-License-Identifier: GPL-2.0
/*
 * loadgen: guest load generators for irqrig scenarios.  Runs each --kind
 * with --workers processes for --duration seconds and prints ONE JSON line:
 *   {"tool":"loadgen","kinds":[...],"duration_s":X,"workers":N,
 *    "ops":{"fork":N,...},"errors":E}
 *
 * fork   fork + exec /bin/true (or _exit without it), wait
 * pipe   one-byte ping-pong between two processes (ops: round trips)
 * timer  short clock_nanosleep() and timerfd wakeups (ops: wakeups)
 * ipi    membarrier(PRIVATE_EXPEDITED), or mprotect() flips of a page that
 *        threads on the other CPUs keep touching (TLB shootdowns)
 * mem    mmap, touch every page, munmap 4 MiB (ops: chunks)
 * io     write + fsync + read 64 KiB of a file under /tmp (ops: rounds)
 *
 * Exit status: 0 ok, 1 runtime error, 2 usage error.
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
#include <linux/membarrier.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define MAX_WORKERS	64
#define MAX_DURATION_S	86400.0
#define GRACE_S		3.0
#define MEM_CHUNK	(4UL << 20)
#define IO_SIZE		(64UL << 10)
#define TIMER_SLEEP_NS	50000
#define TIMERFD_NS	100000

enum kind { K_FORK, K_PIPE, K_TIMER, K_IPI, K_MEM, K_IO, NR_KINDS };

static const char *const kind_names[NR_KINDS] = {
	"fork", "pipe", "timer", "ipi", "mem", "io",
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
};

static struct shared *sh;
static double end_time;
static int interrupted;		/* set from a signal handler */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int should_stop(void)
{
	return __atomic_load_n(&sh->stop, __ATOMIC_RELAXED) || now_s() >= end_time;
}

static void count(enum kind k, int w)
{
	__atomic_fetch_add(&sh->ops[k][w], 1, __ATOMIC_RELAXED);
}

static void warn_errno(const char *what)
{
	fprintf(stderr, "loadgen: %s: %s\n", what, strerror(errno));
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
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int nhelpers = ncpu > 1 ? ncpu - 1 : 1;
	int self = ncpu > 1 ? w % ncpu : -1;
	struct ipi_ctx ctx[MAX_WORKERS];
	pthread_t th[MAX_WORKERS];
	enum ipi_method m;
	char *page;
	int i, ret = 0;

	if (nhelpers > MAX_WORKERS)
		nhelpers = MAX_WORKERS;
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED) {
		warn_errno("mmap");
		return 1;
	}
	memset(page, 1, 4096);
	m = ipi_choose(want);
	__atomic_store_n(&sh->ipi_used, m, __ATOMIC_RELAXED);
	pin_self(self);
	for (i = 0; i < nhelpers; i++) {
		ctx[i].page = page;
		ctx[i].cpu = ncpu > 1 ? (self + 1 + i) % ncpu : -1;
		ctx[i].stop = 0;
		if (pthread_create(&th[i], NULL, ipi_helper, &ctx[i])) {
			fprintf(stderr, "loadgen: pthread_create failed\n");
			nhelpers = i;
			ret = 1;
			break;
		}
	}
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
	for (i = 0; i < nhelpers; i++) {
		__atomic_store_n(&ctx[i].stop, 1, __ATOMIC_RELAXED);
		pthread_join(th[i], NULL);
	}
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

/* main */

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: loadgen --kind KIND[,KIND...] [--kind ...] --duration SECONDS [--workers N]\n"
		"  --kind KIND         fork|pipe|timer|ipi|mem|io (repeatable or comma list)\n"
		"  --duration SECONDS  how long, > 0 and <= %.0f (required)\n"
		"  --workers N         processes per kind, 1..%d (default 1)\n"
		"  --ipi-method M      auto|membarrier-expedited|membarrier-global|mprotect\n"
		"                      (default auto: expedited membarrier, else mprotect)\n"
		"Prints one JSON line on stdout.  Exit: 0 ok, 1 runtime error, 2 usage.\n",
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
	enum ipi_method ipi = IPI_AUTO;
	unsigned int kinds = 0;
	double duration = 0, start, elapsed;
	int c, k, w, workers = 1, npids = 0, errors = 0, running, first;
	struct sigaction sa;
	char out[2048];
	size_t len;
	char *end;

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
			pid_t pid = fork();

			if (pid < 0) {
				warn_errno("fork");
				errors++;
				continue;
			}
			if (!pid)
				_exit(worker((enum kind)k, w, ipi));
			pids[npids++] = pid;
		}
	}

	/* wait for the workers; after the grace period, kill what is left */
	running = npids;
	while (running) {
		int status;
		pid_t pid;
		double t = now_s();

		if (__atomic_load_n(&interrupted, __ATOMIC_RELAXED))
			__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
		if (t > end_time + GRACE_S) {
			for (w = 0; w < npids; w++)
				if (pids[w] > 0)
					kill(-pids[w], SIGKILL);
		}
		pid = waitpid(-1, &status, WNOHANG);
		if (pid > 0) {
			for (w = 0; w < npids; w++) {
				if (pids[w] != pid)
					continue;
				pids[w] = 0;
				running--;
				if (!WIFEXITED(status) || WEXITSTATUS(status))
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
	len += snprintf(out + len, sizeof(out) - len, ",\"errors\":%d,\"interrupted\":%s}\n",
			errors, interrupted ? "true" : "false");
	if (len >= sizeof(out))
		len = sizeof(out) - 1;
	/* one write: the line must not be split by other console output */
	if (write(STDOUT_FILENO, out, len) != (ssize_t)len)
		perror("loadgen: write");
	return errors || interrupted ? 1 : 0;
}
