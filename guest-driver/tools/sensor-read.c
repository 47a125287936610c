// SPDX-License-Identifier: GPL-2.0
/*
 * sensor-read: configure the irq-sensor through /dev/irq-sensorN, read its
 * samples, acknowledge stage 3 (user) for each, check contiguity and values,
 * and print ONE JSON line on stdout (a runner parses it out of a serial
 * console where kernel messages may interleave).
 *
 * Exit status: 0 when it read what was asked, 1 on runtime errors (or when
 * --samples was not reached before the timeout), 2 on usage errors.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdnoreturn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "irq_sensor_regs.h"
#include "irq_sensor_uapi.h"

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

#define DEFAULT_DEV		"/dev/irq-sensor0"
#define DEFAULT_TIMEOUT_S	60.0
#define READ_BATCH		256
#define MANUAL_REFIRE_MS	100

static const char *const mode_names[] = {
	[IRQ_SENSOR_MODE_MANUAL] = "manual",
	[IRQ_SENSOR_MODE_PERIODIC] = "periodic",
	[IRQ_SENSOR_MODE_POISSON] = "poisson",
	[IRQ_SENSOR_MODE_BURST] = "burst",
	[IRQ_SENSOR_MODE_STORM] = "storm",
};

#define CNT(f) { #f, offsetof(struct irq_sensor_counters, f) }
static const struct {
	const char *name;
	size_t off;
} counter_fields[] = {
	CNT(dev_samples), CNT(dev_irqs), CNT(dev_lost_deadline),
	CNT(dev_lost_overflow), CNT(dev_spurious), CNT(dev_dropped),
	CNT(dev_bad_acks), CNT(drv_irqs), CNT(drv_irq_none), CNT(drv_samples),
	CNT(drv_ring_overflow), CNT(drv_hog_runs), CNT(drv_throttles),
	CNT(drv_spurious), CNT(drv_bad_values), CNT(drv_hard_refused),
	CNT(drv_fifo_overflow), CNT(drv_thread_acks), CNT(drv_user_acks),
};

static_assert(ARRAY_SIZE(counter_fields) * sizeof(__u64) ==
	      sizeof(struct irq_sensor_counters),
	      "counter_fields must name every field of struct irq_sensor_counters");

struct options {
	const char *dev;
	struct irq_sensor_config cfg;
	unsigned long long samples;	/* 0: not given */
	double duration_s;		/* 0: not given */
	double timeout_s;
	int no_ack;
	int passive;		/* manual mode: the host fires, not us */
	int rt_prio;		/* SCHED_FIFO priority, 0: leave the policy */
	int keep_running;
	int clear_stats;
	int reset;
	int quiet;
	int hog_given;
	struct irq_sensor_hog hog;
};

struct results {
	unsigned long long samples;
	__u32 first_seq;
	__u32 last_seq;
	unsigned long long gaps;
	unsigned long long missing;
	unsigned long long out_of_order;
	unsigned long long bad_values;
	unsigned long long ring_overflows;
	unsigned long long ack_errors;
	unsigned long long stale;
	unsigned long long fires;
	int timed_out;
	int interrupted;
	double start;
	double elapsed_s;
};

static int stop_requested;	/* set from a signal handler */

static void on_signal(int sig)
{
	(void)sig;
	__atomic_store_n(&stop_requested, 1, __ATOMIC_RELAXED);
}

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: sensor-read [options] (--samples N | --duration SECONDS | both)\n"
		"  --dev PATH            device (default " DEFAULT_DEV ")\n"
		"  --mode MODE           manual|periodic|poisson|burst|storm (default periodic)\n"
		"  --period-ns N         period or mean gap, >= 1000 (default 1000000)\n"
		"  --jitter-ns N         periodic: +- jitter (default 0)\n"
		"  --burst-count N       burst: samples per burst (default 1)\n"
		"  --burst-gap-ns N      burst/storm gap (default 1000)\n"
		"  --seed N              PRNG seed (default 1)\n"
		"  --deadline-ns N       sample deadline, 0 = none (default 0)\n"
		"  --latch N             latch depth 1..%d (default 1)\n"
		"  --spurious-every N    every Nth event spurious, 0 = never\n"
		"  --drop-every N        every Nth sample without interrupt, 0 = never\n"
		"  --samples N           stop after N samples\n"
		"  --duration SECONDS    stop after this long\n"
		"  --timeout SECONDS     give up on --samples after this long (default 60)\n"
		"  --no-ack              do not acknowledge stage 3 (user)\n"
		"  --passive             manual mode: do not fire, read what the host fires\n"
		"  --rt-prio N           run as SCHED_FIFO priority N (1..99), as an RT reader would\n"
		"  --keep-running        leave the generator on at the end\n"
		"  --clear-stats         zero device and driver counters first\n"
		"  --reset               reset the device first (seq restarts at 1)\n"
		"  --hog-us N            driver irq-off hog: section length (0 = off)\n"
		"  --hog-period-us N     hog period (default 10000)\n"
		"  --hog-cpu N           hog CPU, -1 = any (default -1)\n"
		"  --quiet               no summary on stderr\n"
		"Prints one JSON line on stdout.  Exit: 0 ok, 1 runtime error, 2 usage.\n",
		IRQ_SENSOR_LATCH_MAX);
}

/* A macro, so that the compiler checks the format against fprintf() */
#define usage_error(...) do {					\
		fprintf(stderr, "%s: ", "sensor-read");	\
		fprintf(stderr, __VA_ARGS__);				\
		usage_exit();						\
	} while (0)

static noreturn void usage_exit(void)
{
	fprintf(stderr, "\n");
	print_usage(stderr);
	exit(2);
}

static unsigned long long parse_u(const char *opt, const char *s,
				  unsigned long long lo, unsigned long long hi)
{
	unsigned long long v;
	char *end;

	errno = 0;
	if (!*s || *s == '-')
		usage_error("%s: not a number: '%s'", opt, s);
	v = strtoull(s, &end, 0);
	if (errno || *end)
		usage_error("%s: not a number: '%s'", opt, s);
	if (v < lo || v > hi)
		usage_error("%s: %llu is out of range %llu..%llu", opt, v, lo, hi);
	return v;
}

static double parse_seconds(const char *opt, const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !*s || !(v > 0) || v > 86400 * 365.0)
		usage_error("%s: not a positive number of seconds: '%s'", opt, s);
	return v;
}

enum {
	OPT_DEV = 256, OPT_MODE, OPT_PERIOD, OPT_JITTER, OPT_BURST_COUNT,
	OPT_BURST_GAP, OPT_SEED, OPT_DEADLINE, OPT_LATCH, OPT_SPURIOUS,
	OPT_DROP, OPT_SAMPLES, OPT_DURATION, OPT_TIMEOUT, OPT_NO_ACK, OPT_PASSIVE,
	OPT_KEEP, OPT_CLEAR, OPT_RESET, OPT_HOG_US, OPT_HOG_PERIOD, OPT_HOG_CPU, OPT_QUIET,
	OPT_RT_PRIO, OPT_HELP,
};

static const struct option long_opts[] = {
	{ "dev", required_argument, NULL, OPT_DEV },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "period-ns", required_argument, NULL, OPT_PERIOD },
	{ "jitter-ns", required_argument, NULL, OPT_JITTER },
	{ "burst-count", required_argument, NULL, OPT_BURST_COUNT },
	{ "burst-gap-ns", required_argument, NULL, OPT_BURST_GAP },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "deadline-ns", required_argument, NULL, OPT_DEADLINE },
	{ "latch", required_argument, NULL, OPT_LATCH },
	{ "spurious-every", required_argument, NULL, OPT_SPURIOUS },
	{ "drop-every", required_argument, NULL, OPT_DROP },
	{ "samples", required_argument, NULL, OPT_SAMPLES },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "no-ack", no_argument, NULL, OPT_NO_ACK },
	{ "passive", no_argument, NULL, OPT_PASSIVE },
	{ "rt-prio", required_argument, NULL, OPT_RT_PRIO },
	{ "keep-running", no_argument, NULL, OPT_KEEP },
	{ "clear-stats", no_argument, NULL, OPT_CLEAR },
	{ "reset", no_argument, NULL, OPT_RESET },
	{ "hog-us", required_argument, NULL, OPT_HOG_US },
	{ "hog-period-us", required_argument, NULL, OPT_HOG_PERIOD },
	{ "hog-cpu", required_argument, NULL, OPT_HOG_CPU },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

static int parse_mode(const char *s)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(mode_names); i++)
		if (!strcmp(s, mode_names[i]))
			return i;
	usage_error("--mode: unknown mode '%s'", s);
}

static void parse_args(int argc, char **argv, struct options *o)
{
	const unsigned long long u32max = 0xffffffffULL;
	int c, hog_cpu_set = 0;

	memset(o, 0, sizeof(*o));
	o->dev = DEFAULT_DEV;
	/* the device's reset values: a run does not inherit the last one's */
	o->cfg.mode = IRQ_SENSOR_MODE_PERIODIC;
	o->cfg.period_ns = 1000000;
	o->cfg.burst_count = 1;
	o->cfg.burst_gap_ns = 1000;
	o->cfg.seed = 1;
	o->cfg.latch_depth = 1;
	o->timeout_s = DEFAULT_TIMEOUT_S;
	o->hog.period_us = 10000;
	o->hog.cpu = -1;

	while ((c = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_DEV:
			o->dev = optarg;
			break;
		case OPT_MODE:
			o->cfg.mode = parse_mode(optarg);
			break;
		case OPT_PERIOD:
			o->cfg.period_ns = parse_u("--period-ns", optarg, 1000, ~0ULL);
			break;
		case OPT_JITTER:
			o->cfg.jitter_ns = parse_u("--jitter-ns", optarg, 0, u32max);
			break;
		case OPT_BURST_COUNT:
			o->cfg.burst_count = parse_u("--burst-count", optarg, 1, u32max);
			break;
		case OPT_BURST_GAP:
			o->cfg.burst_gap_ns = parse_u("--burst-gap-ns", optarg, 0, u32max);
			break;
		case OPT_SEED:
			o->cfg.seed = parse_u("--seed", optarg, 0, u32max);
			break;
		case OPT_DEADLINE:
			o->cfg.deadline_ns = parse_u("--deadline-ns", optarg, 0, ~0ULL);
			break;
		case OPT_LATCH:
			o->cfg.latch_depth = parse_u("--latch", optarg, 1,
						     IRQ_SENSOR_LATCH_MAX);
			break;
		case OPT_SPURIOUS:
			o->cfg.spurious_every = parse_u("--spurious-every", optarg, 0, u32max);
			break;
		case OPT_DROP:
			o->cfg.drop_every = parse_u("--drop-every", optarg, 0, u32max);
			break;
		case OPT_SAMPLES:
			o->samples = parse_u("--samples", optarg, 1, ~0ULL);
			break;
		case OPT_DURATION:
			o->duration_s = parse_seconds("--duration", optarg);
			break;
		case OPT_TIMEOUT:
			o->timeout_s = parse_seconds("--timeout", optarg);
			break;
		case OPT_NO_ACK:
			o->no_ack = 1;
			break;
		case OPT_PASSIVE:
			o->passive = 1;
			break;
		case OPT_RT_PRIO:
			o->rt_prio = (int)parse_u("--rt-prio", optarg, 1, 99);
			break;
		case OPT_KEEP:
			o->keep_running = 1;
			break;
		case OPT_CLEAR:
			o->clear_stats = 1;
			break;
		case OPT_RESET:
			o->reset = 1;
			break;
		case OPT_HOG_US:
			o->hog.length_us = parse_u("--hog-us", optarg, 0, 1000000);
			o->hog_given = 1;
			break;
		case OPT_HOG_PERIOD:
			o->hog.period_us = parse_u("--hog-period-us", optarg, 1, 10000000);
			break;
		case OPT_HOG_CPU:
			if (!strcmp(optarg, "-1"))
				o->hog.cpu = -1;
			else
				o->hog.cpu = parse_u("--hog-cpu", optarg, 0, 4095);
			hog_cpu_set = 1;
			break;
		case OPT_QUIET:
			o->quiet = 1;
			break;
		case 'h':
		case OPT_HELP:
			print_usage(stdout);
			exit(0);
		default:
			print_usage(stderr);
			exit(2);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (!o->samples && !o->duration_s)
		usage_error("give --samples N or --duration SECONDS (or both)");
	if (o->hog.length_us && o->hog.period_us <= o->hog.length_us)
		usage_error("--hog-period-us must be larger than --hog-us");
	if (!o->hog_given && hog_cpu_set)
		usage_error("--hog-cpu needs --hog-us");
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int xioctl(int fd, unsigned long req, void *arg, const char *what)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret < 0 && errno == EINTR);
	if (ret < 0)
		fprintf(stderr, "sensor-read: %s: %s\n", what, strerror(errno));
	return ret;
}

/* Throw away records left over from an earlier run. */
static int drain(int fd, struct results *r)
{
	struct irq_sensor_sample buf[READ_BATCH];
	ssize_t n;

	for (;;) {
		n = read(fd, buf, sizeof(buf));
		if (n > 0) {
			r->stale += n / sizeof(buf[0]);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		fprintf(stderr, "sensor-read: read: %s\n", n < 0 ? strerror(errno) : "end of file");
		return -1;
	}
}

static void check_sample(const struct irq_sensor_sample *s, struct results *r)
{
	__u32 expect;

	if (s->value != IRQ_SENSOR_SAMPLE_VALUE(s->seq))
		r->bad_values++;
	if (s->flags & IRQ_SENSOR_SAMPLE_F_RING_OVERFLOW)
		r->ring_overflows++;
	if (r->samples) {
		expect = r->last_seq + 1 ? r->last_seq + 1 : 1;	/* seq skips 0 */
		if (s->seq > expect) {
			r->gaps++;
			r->missing += s->seq - expect;
		} else if (s->seq < expect) {
			r->out_of_order++;
		}
	} else {
		r->first_seq = s->seq;
	}
	r->last_seq = s->seq;
	r->samples++;
}

/* The read loop.  Returns 0, or -1 on a runtime error. */
static int run(int fd, const struct options *o, struct results *r)
{
	struct irq_sensor_sample buf[READ_BATCH];
	double end, last_fire = 0, t;
	int manual = o->cfg.mode == IRQ_SENSOR_MODE_MANUAL && !o->passive;
	int fire_pending = 0;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	r->start = now_s();
	end = r->start + (o->duration_s ? o->duration_s : o->timeout_s);
	while (!o->samples || r->samples < o->samples) {
		size_t want = READ_BATCH;
		int timeout_ms, ret;
		ssize_t n, i;

		if (__atomic_load_n(&stop_requested, __ATOMIC_RELAXED)) {
			r->interrupted = 1;
			break;
		}
		t = now_s();
		if (t >= end) {
			/* --duration is a normal end; the default timeout is not */
			r->timed_out = !o->duration_s;
			break;
		}
		if (manual && (!fire_pending || t - last_fire >= MANUAL_REFIRE_MS / 1e3)) {
			if (xioctl(fd, IRQ_SENSOR_IOC_FIRE, NULL, "IRQ_SENSOR_IOC_FIRE"))
				return -1;
			r->fires++;
			fire_pending = 1;
			last_fire = t;
		}
		timeout_ms = (int)((end - t) * 1e3) + 1;
		if (manual && timeout_ms > MANUAL_REFIRE_MS)
			timeout_ms = MANUAL_REFIRE_MS;
		ret = poll(&pfd, 1, timeout_ms);
		if (ret < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "sensor-read: poll: %s\n", strerror(errno));
			return -1;
		}
		if (!ret)
			continue;
		if (pfd.revents & (POLLERR | POLLHUP | POLLNVAL)) {
			fprintf(stderr, "sensor-read: device went away\n");
			return -1;
		}
		if (o->samples && o->samples - r->samples < want)
			want = o->samples - r->samples;
		n = read(fd, buf, want * sizeof(buf[0]));
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			fprintf(stderr, "sensor-read: read: %s\n", strerror(errno));
			return -1;
		}
		n /= sizeof(buf[0]);
		for (i = 0; i < n; i++) {
			/* ack first: the device measures stage 3 at this write */
			if (!o->no_ack && xioctl(fd, IRQ_SENSOR_IOC_ACK_USER, &buf[i].seq,
						 "IRQ_SENSOR_IOC_ACK_USER")) {
				r->ack_errors++;
				if (errno == ENODEV)
					return -1;
			}
			check_sample(&buf[i], r);
		}
		if (n)
			fire_pending = 0;
	}
	return 0;
}

/* A JSON string without quotes or backslashes: device paths are tame. */
static const char *json_safe(const char *s)
{
	return strpbrk(s, "\"\\") ? "?" : s;
}

static void print_json(const struct options *o, const struct results *r,
		       const struct irq_sensor_counters *cnt, int have_cnt)
{
	char *line = NULL;
	size_t len = 0, i;
	FILE *m;

	m = open_memstream(&line, &len);
	if (!m) {
		perror("sensor-read: open_memstream");
		return;
	}
	fprintf(m, "{\"tool\":\"sensor-read\",\"dev\":\"%s\",\"mode\":\"%s\",",
		json_safe(o->dev), mode_names[o->cfg.mode]);
	fprintf(m, "\"requested\":%llu,\"samples\":%llu,\"first_seq\":%u,\"last_seq\":%u,",
		o->samples, r->samples, r->first_seq, r->last_seq);
	fprintf(m, "\"gaps\":%llu,\"missing\":%llu,\"out_of_order\":%llu,",
		r->gaps, r->missing, r->out_of_order);
	fprintf(m, "\"bad_values\":%llu,\"ring_overflows\":%llu,",
		r->bad_values, r->ring_overflows);
	fprintf(m, "\"ack_errors\":%llu,\"stale\":%llu,\"fires\":%llu,",
		r->ack_errors, r->stale, r->fires);
	fprintf(m, "\"acked\":%s,\"timed_out\":%s,\"interrupted\":%s,",
		o->no_ack ? "false" : "true", r->timed_out ? "true" : "false",
		r->interrupted ? "true" : "false");
	fprintf(m, "\"elapsed_s\":%.6f,\"counters\":", r->elapsed_s);
	if (have_cnt) {
		for (i = 0; i < ARRAY_SIZE(counter_fields); i++) {
			const __u64 *v = (const __u64 *)((const char *)cnt +
							 counter_fields[i].off);

			fprintf(m, "%s\"%s\":%llu", i ? "," : "{",
				counter_fields[i].name, (unsigned long long)*v);
		}
		fprintf(m, "}}\n");
	} else {
		fprintf(m, "null}\n");
	}
	if (fclose(m) || !line) {
		perror("sensor-read: open_memstream");
		free(line);
		return;
	}
	/* one write: the line must not be split by other console output */
	if (write(STDOUT_FILENO, line, len) != (ssize_t)len)
		perror("sensor-read: write");
	free(line);
}

int main(int argc, char **argv)
{
	struct irq_sensor_counters cnt;
	struct irq_sensor_config cur;
	struct results r;
	struct options o;
	struct sigaction sa;
	int fd, err = 0, have_cnt, ok;
	__u32 one = 1;

	parse_args(argc, argv, &o);
	if (o.rt_prio) {
		struct sched_param sp = { .sched_priority = o.rt_prio };

		if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
			fprintf(stderr, "sensor-read: SCHED_FIFO %d: %s\n", o.rt_prio,
				strerror(errno));
			return 1;
		}
	}
	memset(&r, 0, sizeof(r));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	fd = open(o.dev, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "sensor-read: %s: %s\n", o.dev, strerror(errno));
		return 1;
	}
	if (o.reset && xioctl(fd, IRQ_SENSOR_IOC_RESET, NULL, "IRQ_SENSOR_IOC_RESET"))
		return 1;
	if (o.hog_given && xioctl(fd, IRQ_SENSOR_IOC_SET_HOG, &o.hog, "IRQ_SENSOR_IOC_SET_HOG"))
		return 1;
	if (o.clear_stats && xioctl(fd, IRQ_SENSOR_IOC_CLEAR_STATS, NULL,
				    "IRQ_SENSOR_IOC_CLEAR_STATS"))
		return 1;
	/* faults (stuck INTx) are the host's business: keep them */
	if (xioctl(fd, IRQ_SENSOR_IOC_GET_CONFIG, &cur, "IRQ_SENSOR_IOC_GET_CONFIG"))
		return 1;
	o.cfg.faults = cur.faults;
	o.cfg.run = 0;
	if (xioctl(fd, IRQ_SENSOR_IOC_SET_CONFIG, &o.cfg, "IRQ_SENSOR_IOC_SET_CONFIG"))
		return 1;
	if (drain(fd, &r))
		return 1;
	o.cfg.run = 1;
	if (xioctl(fd, IRQ_SENSOR_IOC_SET_CONFIG, &o.cfg, "IRQ_SENSOR_IOC_SET_CONFIG"))
		return 1;

	if (run(fd, &o, &r))
		err = 1;
	r.elapsed_s = now_s() - r.start;

	if (o.keep_running) {
		if (xioctl(fd, IRQ_SENSOR_IOC_KEEP_RUNNING, &one, "IRQ_SENSOR_IOC_KEEP_RUNNING"))
			err = 1;
	} else {
		o.cfg.run = 0;
		if (xioctl(fd, IRQ_SENSOR_IOC_SET_CONFIG, &o.cfg, "IRQ_SENSOR_IOC_SET_CONFIG"))
			err = 1;
	}
	if (o.hog_given && o.hog.length_us) {
		struct irq_sensor_hog off = { .length_us = 0, .period_us = 0, .cpu = -1 };

		if (xioctl(fd, IRQ_SENSOR_IOC_SET_HOG, &off, "IRQ_SENSOR_IOC_SET_HOG"))
			err = 1;
	}
	have_cnt = !xioctl(fd, IRQ_SENSOR_IOC_GET_COUNTERS, &cnt, "IRQ_SENSOR_IOC_GET_COUNTERS");
	if (!have_cnt)
		err = 1;
	print_json(&o, &r, &cnt, have_cnt);
	close(fd);

	ok = !err && !r.interrupted && !r.timed_out;
	if (r.timed_out)
		fprintf(stderr, "sensor-read: timeout: read %llu of %llu samples in %.0f s\n",
			r.samples, o.samples, o.timeout_s);
	if (!o.quiet)
		fprintf(stderr,
			"sensor-read: %llu samples, seq %u..%u, %llu gaps (%llu missing), %llu bad values, %llu ring overflows, %.3f s\n",
			r.samples, r.first_seq, r.last_seq, r.gaps, r.missing,
			r.bad_values, r.ring_overflows, r.elapsed_s);
	return ok ? 0 : 1;
}
