/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * irq-sensor: a PCI device that raises timestamped interrupts and measures,
 * in QEMU virtual time, how long the guest takes to acknowledge each sample
 * in its hard handler, its handler thread and user space (irqrig).
 *
 * The register map is hw/misc/irq_sensor_regs.h, shared with the guest
 * driver.  Everything runs from QEMU_CLOCK_VIRTUAL timers in the main loop
 * (no threads), and all randomness comes from a PRNG seeded by SEED, so a
 * run is a function of its configuration: under qtest or
 * -icount shift=N,sleep=off the event log is byte-identical between runs.
 *
 * Every run-time knob is reachable from the guest (MMIO) and from the host
 * (QOM properties, qom-set); both paths go through irq_sensor_set_knob().
 */

#include "qemu/osdep.h"
#include <math.h>
#include "qemu/log.h"
#include "qemu/module.h"
#include "qemu/timer.h"
#include "qemu/host-utils.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "qapi/util.h"
#include "hw/pci/pci.h"
#include "hw/pci/pci_device.h"
#include "hw/pci/msi.h"
#include "hw/pci/msix.h"
#include "hw/qdev-properties.h"
#include "hw/qdev-properties-system.h"
#include "chardev/char-fe.h"
#include "migration/vmstate.h"
#include "qom/object.h"
#include "hw/misc/irq_sensor_regs.h"

#define TYPE_IRQ_SENSOR "irq-sensor"
OBJECT_DECLARE_SIMPLE_TYPE(IrqSensorState, IRQ_SENSOR)

/* Samples remembered (indexed by seq) so thread/user acks can be matched */
#define IRQ_SENSOR_RING_SIZE    1024
#define IRQ_SENSOR_NO_ADDR      UINT32_MAX

typedef enum IrqSensorIrqMode {
    IRQ_SENSOR_IRQ_MSIX,
    IRQ_SENSOR_IRQ_MSI,
    IRQ_SENSOR_IRQ_INTX,
    IRQ_SENSOR_IRQ__MAX,
} IrqSensorIrqMode;

/* Run-time knobs: settable by the guest (registers) and the host (QOM) */
typedef enum IrqSensorKnob {
    KNOB_MODE,
    KNOB_PERIOD,
    KNOB_JITTER,
    KNOB_BURST_COUNT,
    KNOB_BURST_GAP,
    KNOB_SEED,
    KNOB_DEADLINE,
    KNOB_LATCH_DEPTH,
    KNOB_SPURIOUS_EVERY,
    KNOB_DROP_EVERY,
    KNOB_STUCK_INTX,
    KNOB_IRQ_EN,
    KNOB_RUN,
    KNOB__MAX,
} IrqSensorKnob;

typedef enum IrqSensorCounter {
    CNT_SAMPLES,
    CNT_IRQS,
    CNT_LOST_DEADLINE,
    CNT_LOST_OVERFLOW,
    CNT_SPURIOUS,
    CNT_DROPPED,
    CNT_BAD_ACKS,
    CNT_HOST_LATE,
    CNT_STALE_ACKS,
    CNT_THROTTLED,
    CNT__MAX,
} IrqSensorCounter;

typedef struct IrqSensorSample {
    uint32_t seq;
    bool irq;           /* false for a dropped sample: it asserts no INTx */
    int64_t t_raise;
} IrqSensorSample;

typedef struct IrqSensorRingEntry {
    uint32_t seq;       /* 0: empty */
    uint32_t acked;     /* BIT(stage) for each good ack */
    int64_t t_raise;
} IrqSensorRingEntry;

typedef struct IrqSensorStageStats {
    uint64_t count;
    uint64_t min;
    uint64_t max;
    uint64_t sum;
    uint32_t hist[IRQ_SENSOR_HIST_BUCKETS];
} IrqSensorStageStats;

struct IrqSensorState {
    PCIDevice parent_obj;

    MemoryRegion mmio;
    QEMUTimer gen_timer;        /* next generator event */
    QEMUTimer deadline_timer;   /* expiry of the latch head */

    /* static properties */
    int irq_mode;
    CharBackend log;
    uint64_t late_skip_ns;      /* 0: raise every overdue event */
    uint64_t log_max_bytes;     /* event log size cap; 0: none */

    uint64_t knob[KNOB__MAX];
    uint32_t status;            /* STATUS_SPURIOUS | STATUS_LOST */

    /* FIFO of unacknowledged samples, oldest at latch_head */
    IrqSensorSample latch[IRQ_SENSOR_LATCH_MAX];
    uint32_t latch_head;
    uint32_t latch_count;
    IrqSensorRingEntry ring[IRQ_SENSOR_RING_SIZE];
    uint32_t next_seq;

    /* generator */
    uint64_t prng;
    int64_t gen_anchor;         /* drift-free schedule point */
    int64_t gen_due;            /* when the pending event is due */
    uint32_t burst_idx;
    uint64_t gen_events;        /* phase for SPURIOUS_EVERY */
    int64_t instant;            /* virtual time of the last event... */
    uint32_t instant_events;    /* ...and how many came at that time */
    int64_t gen_held_ns;        /* throttle delay while behind schedule */

    uint64_t log_bytes;         /* written to the event log */
    bool log_full;              /* the cap was reached: logging stopped */

    uint64_t cnt[CNT__MAX];
    IrqSensorStageStats stats[IRQ_SENSOR_NR_STAGES];
    int64_t stamp[IRQ_SENSOR_NR_STAGES];

    /* 64-bit registers accessed as two 32-bit halves, low word first */
    uint32_t wr_lo_addr;
    uint32_t wr_lo_val;
    uint32_t rd_snap_addr;
    uint32_t rd_snap_hi;
};

typedef enum IrqSensorKnobType {
    KT_U32,
    KT_U64,
    KT_BOOL,
    KT_MODE,
} IrqSensorKnobType;

typedef struct IrqSensorKnobInfo {
    const char *name;           /* QOM property and event log key */
    IrqSensorKnobType type;
    uint64_t min;
    uint64_t max;
    uint64_t reset;
    const char *desc;
} IrqSensorKnobInfo;

static const IrqSensorKnobInfo irq_sensor_knobs[KNOB__MAX] = {
    [KNOB_MODE] = {
        "mode", KT_MODE, 0, IRQ_SENSOR_MODE_MAX, IRQ_SENSOR_MODE_MANUAL,
        "generator pattern: manual, periodic, poisson, burst or storm" },
    [KNOB_PERIOD] = {
        "period-ns", KT_U64, 1000, UINT64_MAX, 1000000,
        "period (periodic, burst) or mean gap (poisson), ns, >= 1000" },
    [KNOB_JITTER] = {
        "jitter-ns", KT_U32, 0, UINT32_MAX, 0,
        "periodic mode: uniform +- jitter around each period, ns" },
    [KNOB_BURST_COUNT] = {
        "burst-count", KT_U32, 1, UINT32_MAX, 1,
        "burst mode: samples per burst, >= 1" },
    [KNOB_BURST_GAP] = {
        "burst-gap-ns", KT_U32, 0, UINT32_MAX, 1000,
        "burst: ns between samples of a burst; storm: ns from hard ack "
        "to the next sample" },
    [KNOB_SEED] = {
        "seed", KT_U32, 0, UINT32_MAX, 1,
        "PRNG seed for poisson gaps and periodic jitter" },
    [KNOB_DEADLINE] = {
        "deadline-ns", KT_U64, 0, UINT64_MAX, 0,
        "a sample not hard-acked within this many ns is lost, 0 = never" },
    [KNOB_LATCH_DEPTH] = {
        "latch-depth", KT_U32, 1, IRQ_SENSOR_LATCH_MAX, 1,
        "samples the latch holds (1..16); a new one pushes out the oldest" },
    [KNOB_SPURIOUS_EVERY] = {
        "spurious-every", KT_U32, 0, UINT32_MAX, 0,
        "every Nth generator event is an interrupt without a sample, "
        "0 = never" },
    [KNOB_DROP_EVERY] = {
        "drop-every", KT_U32, 0, UINT32_MAX, 0,
        "every Nth sample raises no interrupt, 0 = never" },
    [KNOB_STUCK_INTX] = {
        "stuck-intx", KT_BOOL, 0, 1, 0,
        "fault: hold INTx asserted" },
    [KNOB_IRQ_EN] = {
        "irq-enable", KT_BOOL, 0, 1, 0,
        "raise interrupts (CTRL.IRQ_EN)" },
    [KNOB_RUN] = {
        "run", KT_BOOL, 0, 1, 0,
        "generator runs (CTRL.RUN)" },
};

static const char *const irq_sensor_mode_names[] = {
    [IRQ_SENSOR_MODE_MANUAL] = "manual",
    [IRQ_SENSOR_MODE_PERIODIC] = "periodic",
    [IRQ_SENSOR_MODE_POISSON] = "poisson",
    [IRQ_SENSOR_MODE_BURST] = "burst",
    [IRQ_SENSOR_MODE_STORM] = "storm",
};
QEMU_BUILD_BUG_ON(ARRAY_SIZE(irq_sensor_mode_names) !=
                  IRQ_SENSOR_MODE_MAX + 1);

static const QEnumLookup irq_sensor_mode_lookup = {
    .array = irq_sensor_mode_names,
    .size = ARRAY_SIZE(irq_sensor_mode_names),
};

static const char *const irq_sensor_irq_mode_names[] = {
    [IRQ_SENSOR_IRQ_MSIX] = "msix",
    [IRQ_SENSOR_IRQ_MSI] = "msi",
    [IRQ_SENSOR_IRQ_INTX] = "intx",
};

static const QEnumLookup irq_sensor_irq_mode_lookup = {
    .array = irq_sensor_irq_mode_names,
    .size = IRQ_SENSOR_IRQ__MAX,
};

static const char *const irq_sensor_stage_names[IRQ_SENSOR_NR_STAGES] = {
    [IRQ_SENSOR_STAGE_HARD] = "hard",
    [IRQ_SENSOR_STAGE_THREAD] = "thread",
    [IRQ_SENSOR_STAGE_USER] = "user",
};

typedef struct IrqSensorCounterInfo {
    const char *name;
    hwaddr reg;
    const char *desc;
} IrqSensorCounterInfo;

static const IrqSensorCounterInfo irq_sensor_counters[CNT__MAX] = {
    [CNT_SAMPLES] = { "samples", IRQ_SENSOR_REG_CNT_SAMPLES,
                      "samples produced" },
    [CNT_IRQS] = { "irqs", IRQ_SENSOR_REG_CNT_IRQS,
                   "interrupts raised (samples and spurious)" },
    [CNT_LOST_DEADLINE] = { "lost-deadline",
                            IRQ_SENSOR_REG_CNT_LOST_DEADLINE,
                            "samples that expired in the latch" },
    [CNT_LOST_OVERFLOW] = { "lost-overflow",
                            IRQ_SENSOR_REG_CNT_LOST_OVERFLOW,
                            "samples pushed out of a full latch" },
    [CNT_SPURIOUS] = { "spurious", IRQ_SENSOR_REG_CNT_SPURIOUS,
                       "interrupts without a sample" },
    [CNT_DROPPED] = { "dropped", IRQ_SENSOR_REG_CNT_DROPPED,
                      "samples that raised no interrupt" },
    [CNT_BAD_ACKS] = { "bad-acks", IRQ_SENSOR_REG_CNT_BAD_ACKS,
                       "stage acks with a wrong sequence or order" },
    [CNT_HOST_LATE] = { "host-late", IRQ_SENSOR_REG_CNT_HOST_LATE,
                        "generator events not raised: the host ran the "
                        "device's timer more than late-skip-ns late" },
    [CNT_STALE_ACKS] = { "stale-acks", IRQ_SENSOR_REG_CNT_STALE_ACKS,
                         "stage acks of a sample whose record a later "
                         "sample reused: not measured" },
    [CNT_THROTTLED] = { "throttled", IRQ_SENSOR_REG_CNT_THROTTLED,
                        "times the generator was held back after "
                        "IRQ_SENSOR_INSTANT_MAX events at one instant" },
};

static int64_t irq_sensor_now(void)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

/* t + d for non-negative t, saturating: huge knobs mean "never" */
static int64_t irq_sensor_add(int64_t t, uint64_t d)
{
    return d > (uint64_t)(INT64_MAX - t) ? INT64_MAX : t + (int64_t)d;
}

/* Event log: one JSON object per line, fields in a fixed order */
static void G_GNUC_PRINTF(4, 5)
irq_sensor_log(IrqSensorState *s, const char *ev, int64_t t,
               const char *fmt, ...)
{
    g_autofree char *rest = NULL;
    g_autofree char *line = NULL;
    va_list ap;

    if (!qemu_chr_fe_backend_connected(&s->log)) {
        return;
    }
    if (s->log_full) {
        return;
    }
    va_start(ap, fmt);
    rest = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    line = g_strdup_printf("{\"ev\":\"%s\",\"t\":%" PRId64 "%s}\n",
                           ev, t, rest);
    if (s->log_max_bytes && s->log_bytes + strlen(line) > s->log_max_bytes) {
        /* Never silent: the last line says the log stops here */
        g_free(line);
        line = g_strdup_printf("{\"ev\":\"log_full\",\"t\":%" PRId64
                               ",\"bytes\":%" PRIu64 "}\n", t, s->log_bytes);
        s->log_full = true;
    }
    s->log_bytes += strlen(line);
    qemu_chr_fe_write_all(&s->log, (const uint8_t *)line, strlen(line));
}

static void irq_sensor_log_config(IrqSensorState *s, IrqSensorKnob k,
                                  int64_t now, bool host)
{
    const IrqSensorKnobInfo *ki = &irq_sensor_knobs[k];
    uint64_t v = s->knob[k];
    g_autofree char *value = NULL;

    switch (ki->type) {
    case KT_MODE:
        value = g_strdup_printf("\"%s\"", irq_sensor_mode_names[v]);
        break;
    case KT_BOOL:
        value = g_strdup(v ? "true" : "false");
        break;
    default:
        value = g_strdup_printf("%" PRIu64, v);
        break;
    }
    irq_sensor_log(s, "config", now, ",\"key\":\"%s\",\"value\":%s,"
                   "\"src\":\"%s\"", ki->name, value, host ? "host" : "guest");
}

/* Interrupts */

/* Is the message mechanism of irq-mode enabled by the guest? */
static bool irq_sensor_msg_enabled(IrqSensorState *s)
{
    PCIDevice *pdev = PCI_DEVICE(s);

    switch (s->irq_mode) {
    case IRQ_SENSOR_IRQ_MSIX:
        return msix_enabled(pdev);
    case IRQ_SENSOR_IRQ_MSI:
        return msi_enabled(pdev);
    default:
        return false;
    }
}

static bool irq_sensor_irq_pending(IrqSensorState *s)
{
    uint32_t i;

    if (s->status & IRQ_SENSOR_STATUS_SPURIOUS) {
        return true;
    }
    for (i = 0; i < s->latch_count; i++) {
        if (s->latch[(s->latch_head + i) % IRQ_SENSOR_LATCH_MAX].irq) {
            return true;
        }
    }
    return false;
}

/*
 * INTx is level-triggered and follows the state.  Like any PCI function it
 * is also the fallback while the guest has not enabled MSI/MSI-X.
 */
static void irq_sensor_update_intx(IrqSensorState *s)
{
    bool level = s->knob[KNOB_STUCK_INTX] ||
                 (!irq_sensor_msg_enabled(s) && s->knob[KNOB_IRQ_EN] &&
                  irq_sensor_irq_pending(s));

    pci_set_irq(PCI_DEVICE(s), level);
}

/* One edge per raise; msix_notify/msi_notify handle masking and pending */
static void irq_sensor_notify(IrqSensorState *s)
{
    PCIDevice *pdev = PCI_DEVICE(s);

    if (s->irq_mode == IRQ_SENSOR_IRQ_MSIX && msix_enabled(pdev)) {
        msix_notify(pdev, 0);
    } else if (s->irq_mode == IRQ_SENSOR_IRQ_MSI && msi_enabled(pdev)) {
        msi_notify(pdev, 0);
    }
}

/* Latch */

static IrqSensorSample *irq_sensor_head(IrqSensorState *s)
{
    return s->latch_count ? &s->latch[s->latch_head] : NULL;
}

static void irq_sensor_arm_deadline(IrqSensorState *s)
{
    IrqSensorSample *head = irq_sensor_head(s);
    int64_t expiry;

    if (!head || !s->knob[KNOB_DEADLINE]) {
        timer_del(&s->deadline_timer);
        return;
    }
    expiry = irq_sensor_add(head->t_raise, s->knob[KNOB_DEADLINE]);
    if (expiry == INT64_MAX) {
        timer_del(&s->deadline_timer);
    } else {
        timer_mod_ns(&s->deadline_timer, expiry);
    }
}

static void irq_sensor_pop(IrqSensorState *s)
{
    s->latch_head = (s->latch_head + 1) % IRQ_SENSOR_LATCH_MAX;
    s->latch_count--;
}

/*
 * Arm the generator for @t.  A timer armed for the current instant runs
 * again in the same timer run, and under icount or qtest the clock does
 * not move there: a zero-gap storm of spurious events, or a zero-gap burst
 * of 2^32 samples, would spin holding the BQL.  After
 * IRQ_SENSOR_INSTANT_MAX events at one instant the generator waits
 * IRQ_SENSOR_THROTTLE_NS (counted, logged) so that the guest runs.
 */
static void irq_sensor_gen_arm(IrqSensorState *s, int64_t t, int64_t now)
{
    int64_t when = MAX(t, now);

    if (t > now) {
        s->gen_held_ns = 0;             /* on schedule again */
    } else if (s->instant == now &&
               s->instant_events >= IRQ_SENSOR_INSTANT_MAX) {
        s->cnt[CNT_THROTTLED]++;
        irq_sensor_log(s, "throttle", now, ",\"events\":%u",
                       s->instant_events);
        when = irq_sensor_add(now, IRQ_SENSOR_THROTTLE_NS);
        /* the device's own delay, not the host's (irq_sensor_host_late) */
        s->gen_held_ns += IRQ_SENSOR_THROTTLE_NS;
    }
    s->gen_due = t;
    timer_mod_ns(&s->gen_timer, when);
}

/* One more generator event (raised or skipped) at @now */
static void irq_sensor_count_instant(IrqSensorState *s, int64_t now)
{
    if (s->instant != now) {
        s->instant = now;
        s->instant_events = 0;
    }
    s->instant_events++;
}

/* Storm: the next event follows whatever ended the last one */
static void irq_sensor_storm_next(IrqSensorState *s, int64_t now)
{
    int64_t t;

    if (!s->knob[KNOB_RUN] || s->knob[KNOB_MODE] != IRQ_SENSOR_MODE_STORM) {
        return;
    }
    /* Always through the timer, even for a zero gap: never recurse */
    t = irq_sensor_add(now, s->knob[KNOB_BURST_GAP]);
    if (t != INT64_MAX) {
        irq_sensor_gen_arm(s, t, now);
    }
}

static void irq_sensor_lose_head(IrqSensorState *s, int64_t now,
                                 bool deadline)
{
    IrqSensorSample *head = irq_sensor_head(s);

    s->cnt[deadline ? CNT_LOST_DEADLINE : CNT_LOST_OVERFLOW]++;
    s->status |= IRQ_SENSOR_STATUS_LOST;
    irq_sensor_log(s, "lost", now, ",\"seq\":%u,\"why\":\"%s\"", head->seq,
                   deadline ? "deadline" : "overflow");
    irq_sensor_pop(s);
    if (deadline) {
        /* else a storm whose sample expired would stall for good */
        irq_sensor_storm_next(s, now);
    }
}

/* Drop every sample whose deadline has passed; true if any was lost */
static bool irq_sensor_expire(IrqSensorState *s, int64_t now)
{
    uint64_t deadline = s->knob[KNOB_DEADLINE];
    IrqSensorSample *head;
    bool lost = false;

    while (deadline && (head = irq_sensor_head(s)) &&
           irq_sensor_add(head->t_raise, deadline) <= now) {
        irq_sensor_lose_head(s, now, true);
        lost = true;
    }
    return lost;
}

static void irq_sensor_deadline_cb(void *opaque)
{
    IrqSensorState *s = opaque;

    if (irq_sensor_expire(s, irq_sensor_now())) {
        irq_sensor_update_intx(s);
    }
    irq_sensor_arm_deadline(s);
}

static void irq_sensor_raise(IrqSensorState *s, int64_t now)
{
    uint32_t seq = s->next_seq;
    uint64_t drop_every = s->knob[KNOB_DROP_EVERY];
    bool dropped = drop_every && seq % drop_every == 0;
    bool irq = !dropped && s->knob[KNOB_IRQ_EN];
    IrqSensorRingEntry *re = &s->ring[seq % IRQ_SENSOR_RING_SIZE];
    IrqSensorSample *smp;

    /* Expire first so a sample past its deadline is not counted overflow */
    irq_sensor_expire(s, now);
    while (s->latch_count >= s->knob[KNOB_LATCH_DEPTH]) {
        irq_sensor_lose_head(s, now, false);
    }

    s->next_seq = seq + 1 ? seq + 1 : 1;
    smp = &s->latch[(s->latch_head + s->latch_count) % IRQ_SENSOR_LATCH_MAX];
    smp->seq = seq;
    smp->irq = !dropped;
    smp->t_raise = now;
    s->latch_count++;
    re->seq = seq;
    re->acked = 0;
    re->t_raise = now;

    s->cnt[CNT_SAMPLES]++;
    if (dropped) {
        s->cnt[CNT_DROPPED]++;
    }
    /* "irq" false marks a dropped sample, whatever IRQ_EN says */
    irq_sensor_log(s, "raise", now, ",\"seq\":%u,\"value\":%u,\"irq\":%s",
                   seq, IRQ_SENSOR_SAMPLE_VALUE(seq),
                   dropped ? "false" : "true");
    if (irq) {
        s->cnt[CNT_IRQS]++;
        irq_sensor_notify(s);
    }
    irq_sensor_update_intx(s);
    irq_sensor_arm_deadline(s);
}

static void irq_sensor_spurious(IrqSensorState *s, int64_t now)
{
    s->status |= IRQ_SENSOR_STATUS_SPURIOUS;
    s->cnt[CNT_SPURIOUS]++;
    irq_sensor_log(s, "spurious", now, "%s", "");
    if (s->knob[KNOB_IRQ_EN]) {
        s->cnt[CNT_IRQS]++;
        irq_sensor_notify(s);
    }
    irq_sensor_update_intx(s);
    /* no sample, so no hard ack will follow: keep a storm going */
    irq_sensor_storm_next(s, now);
}

/* Stage acks */

static void irq_sensor_stats_add(IrqSensorStageStats *st, uint64_t lat)
{
    unsigned bucket = lat ? MIN(63 - clz64(lat), IRQ_SENSOR_HIST_BUCKETS - 1)
                          : 0;

    st->count++;
    st->sum += lat;
    if (st->count == 1 || lat < st->min) {
        st->min = lat;
    }
    if (lat > st->max) {
        st->max = lat;
    }
    st->hist[bucket]++;
}

/*
 * The ring remembers the last IRQ_SENSOR_RING_SIZE samples.  A sample
 * whose slot a later one reused was raised (sequence numbers count up
 * from 1), but its stages can no longer be checked or measured: a guest
 * that falls that far behind (a storm while its thread is held off) is
 * slow, not wrong.
 */
static bool irq_sensor_ack_stale(IrqSensorState *s, uint32_t seq)
{
    IrqSensorRingEntry *re = &s->ring[seq % IRQ_SENSOR_RING_SIZE];

    return seq && seq < re->seq;
}

/* NULL if @seq may be acked at @stage now, else why not */
static const char *irq_sensor_ack_error(IrqSensorState *s, unsigned stage,
                                        uint32_t seq)
{
    IrqSensorRingEntry *re = &s->ring[seq % IRQ_SENSOR_RING_SIZE];
    IrqSensorSample *head = irq_sensor_head(s);

    if (!seq || re->seq != seq) {
        return "unknown sequence";
    }
    if (re->acked & BIT(stage)) {
        return "duplicate ack";
    }
    switch (stage) {
    case IRQ_SENSOR_STAGE_HARD:
        if (!head || head->seq != seq) {
            return "not the latch head (lost or out of order)";
        }
        return NULL;
    default:
        if (!(re->acked & BIT(stage - 1))) {
            return "previous stage not acked";
        }
        return NULL;
    }
}

static void irq_sensor_ack(IrqSensorState *s, unsigned stage, uint32_t seq)
{
    int64_t now = irq_sensor_now();
    IrqSensorRingEntry *re = &s->ring[seq % IRQ_SENSOR_RING_SIZE];
    bool stale = irq_sensor_ack_stale(s, seq);
    const char *why;
    uint64_t lat;

    /* valid strictly before the deadline, even if the timer has not run */
    irq_sensor_expire(s, now);
    why = stale ? NULL : irq_sensor_ack_error(s, stage, seq);
    if (stale) {
        s->cnt[CNT_STALE_ACKS]++;
        irq_sensor_log(s, "stale_ack", now, ",\"stage\":\"%s\",\"seq\":%u",
                       irq_sensor_stage_names[stage], seq);
    } else if (why) {
        s->cnt[CNT_BAD_ACKS]++;
        qemu_log_mask(LOG_GUEST_ERROR, "irq-sensor: bad %s ack of seq %u: "
                      "%s\n", irq_sensor_stage_names[stage], seq, why);
        irq_sensor_log(s, "bad_ack", now, ",\"stage\":\"%s\",\"seq\":%u,"
                       "\"why\":\"%s\"", irq_sensor_stage_names[stage], seq,
                       why);
    } else {
        lat = now - re->t_raise;
        re->acked |= BIT(stage);
        s->stamp[stage] = now;
        irq_sensor_stats_add(&s->stats[stage], lat);
        irq_sensor_log(s, "ack", now, ",\"stage\":\"%s\",\"seq\":%u,"
                       "\"lat\":%" PRIu64, irq_sensor_stage_names[stage],
                       seq, lat);
        if (stage == IRQ_SENSOR_STAGE_HARD) {
            irq_sensor_pop(s);
            irq_sensor_storm_next(s, now);
        }
    }
    irq_sensor_update_intx(s);
    irq_sensor_arm_deadline(s);
}

/* Generator */

/* xorshift64*: small, fast and identical everywhere */
static uint64_t irq_sensor_rand(IrqSensorState *s)
{
    uint64_t x = s->prng;

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    s->prng = x;
    return x * 0x2545f4914f6cdd1dULL;
}

static void irq_sensor_seed(IrqSensorState *s)
{
    /* splitmix64 spreads small seeds; xorshift state must not be 0 */
    uint64_t z = s->knob[KNOB_SEED] + 0x9e3779b97f4a7c15ULL;

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    s->prng = z ? z : 1;
}

/*
 * Plan the next periodic/poisson/burst event.  Times derive from
 * gen_anchor, not from when the timer ran, so nothing drifts.
 */
static void irq_sensor_gen_schedule(IrqSensorState *s, int64_t now)
{
    uint64_t period = s->knob[KNOB_PERIOD];
    uint64_t jitter = s->knob[KNOB_JITTER];
    int64_t t;

    switch (s->knob[KNOB_MODE]) {
    case IRQ_SENSOR_MODE_PERIODIC:
        s->gen_anchor = irq_sensor_add(s->gen_anchor, period);
        t = s->gen_anchor;
        if (jitter && t != INT64_MAX) {
            t += (int64_t)(irq_sensor_rand(s) % (2 * jitter + 1)) -
                 (int64_t)jitter;
        }
        break;
    case IRQ_SENSOR_MODE_POISSON: {
        /* u in (0, 1], so the gap is finite */
        double u = ((irq_sensor_rand(s) >> 11) + 1) / (double)(1ULL << 53);
        double gap = -log(u) * (double)period + 0.5;

        s->gen_anchor = gap >= (double)(INT64_MAX - s->gen_anchor) ?
                        INT64_MAX : s->gen_anchor + (int64_t)gap;
        t = s->gen_anchor;
        break;
    }
    case IRQ_SENSOR_MODE_BURST:
        if (s->burst_idx >= s->knob[KNOB_BURST_COUNT]) {
            s->burst_idx = 0;
            s->gen_anchor = irq_sensor_add(s->gen_anchor, period);
        }
        t = irq_sensor_add(s->gen_anchor,
                           (uint64_t)s->burst_idx * s->knob[KNOB_BURST_GAP]);
        break;
    default:
        return;
    }
    if (t != INT64_MAX) {
        irq_sensor_gen_arm(s, t, now);
    }
}

/*
 * Without icount the virtual clock follows the host's, and a timer runs
 * when QEMU's main loop gets to it.  If the host kept the main loop away
 * for longer than the latch covers, catching up would raise the whole
 * backlog at once and overflow the latch: losses the guest did not cause.
 * So an event overdue by more than late-skip-ns is counted and not raised.
 * Under icount a timer runs at its virtual time (with sleep=off only
 * since qemu-patches/0001: before it, a warp from the main loop could
 * overshoot by the instructions not yet accounted), so nothing is skipped.
 */
static bool irq_sensor_host_late(IrqSensorState *s, int64_t now)
{
    if (!s->late_skip_ns || s->knob[KNOB_MODE] == IRQ_SENSOR_MODE_STORM ||
        now - s->gen_due - s->gen_held_ns <=
        (int64_t)MIN(s->late_skip_ns, INT64_MAX)) {
        return false;
    }
    s->cnt[CNT_HOST_LATE]++;
    irq_sensor_log(s, "late", now, ",\"due\":%" PRId64, s->gen_due);
    return true;
}

static void irq_sensor_gen_event(IrqSensorState *s, int64_t now)
{
    uint64_t every = s->knob[KNOB_SPURIOUS_EVERY];

    s->gen_events++;
    if (every && s->gen_events % every == 0) {
        irq_sensor_spurious(s, now);
    } else {
        irq_sensor_raise(s, now);
    }
}

static void irq_sensor_gen_cb(void *opaque)
{
    IrqSensorState *s = opaque;
    int64_t now = irq_sensor_now();

    if (!s->knob[KNOB_RUN] || s->knob[KNOB_MODE] == IRQ_SENSOR_MODE_MANUAL) {
        return;
    }
    irq_sensor_count_instant(s, now);
    if (!irq_sensor_host_late(s, now)) {
        irq_sensor_gen_event(s, now);
    }
    if (s->knob[KNOB_MODE] == IRQ_SENSOR_MODE_BURST) {
        s->burst_idx++;
    }
    irq_sensor_gen_schedule(s, now);
}

/* (Re)start the schedule from @now; the PRNG restarts from SEED */
static void irq_sensor_gen_start(IrqSensorState *s, int64_t now)
{
    timer_del(&s->gen_timer);
    irq_sensor_seed(s);
    s->gen_anchor = now;
    /* a burst "just ended": the first one starts PERIOD from now */
    s->burst_idx = s->knob[KNOB_BURST_COUNT];
    s->gen_held_ns = 0;
    if (s->knob[KNOB_MODE] == IRQ_SENSOR_MODE_STORM) {
        irq_sensor_count_instant(s, now);
        irq_sensor_gen_event(s, now);
    } else {
        irq_sensor_gen_schedule(s, now);
    }
}

/* Knobs, shared by the guest (MMIO) and the host (QOM) */

static bool irq_sensor_set_knob(IrqSensorState *s, IrqSensorKnob k,
                                uint64_t val, bool host, Error **errp)
{
    const IrqSensorKnobInfo *ki = &irq_sensor_knobs[k];
    int64_t now = irq_sensor_now();
    bool running = s->knob[KNOB_RUN];
    uint64_t mode;

    if (val < ki->min || val > ki->max) {
        if (ki->max == (ki->type == KT_U64 ? UINT64_MAX : UINT32_MAX)) {
            error_setg(errp, "irq-sensor: %s must be >= %" PRIu64
                       ", not %" PRIu64, ki->name, ki->min, val);
        } else {
            error_setg(errp, "irq-sensor: %s must be %" PRIu64 "..%" PRIu64
                       ", not %" PRIu64, ki->name, ki->min, ki->max, val);
        }
        return false;
    }
    if (s->knob[k] == val) {
        return true;
    }
    s->knob[k] = val;
    irq_sensor_log_config(s, k, now, host);

    mode = s->knob[KNOB_MODE];
    switch (k) {
    case KNOB_MODE:
        if (running) {
            irq_sensor_gen_start(s, now);
        }
        break;
    case KNOB_PERIOD:
    case KNOB_JITTER:
    case KNOB_BURST_COUNT:
    case KNOB_SEED:
        if (running && mode != IRQ_SENSOR_MODE_MANUAL &&
            mode != IRQ_SENSOR_MODE_STORM) {
            irq_sensor_gen_start(s, now);
        }
        break;
    case KNOB_BURST_GAP:
        /* a storm just uses the new gap after the next ack */
        if (running && mode == IRQ_SENSOR_MODE_BURST) {
            irq_sensor_gen_start(s, now);
        }
        break;
    case KNOB_DEADLINE:
        irq_sensor_expire(s, now);
        irq_sensor_update_intx(s);
        irq_sensor_arm_deadline(s);
        break;
    case KNOB_LATCH_DEPTH:
        while (s->latch_count > val) {
            irq_sensor_lose_head(s, now, false);
        }
        irq_sensor_update_intx(s);
        irq_sensor_arm_deadline(s);
        break;
    case KNOB_STUCK_INTX:
    case KNOB_IRQ_EN:
        irq_sensor_update_intx(s);
        break;
    case KNOB_RUN:
        if (val) {
            irq_sensor_gen_start(s, now);
        } else {
            timer_del(&s->gen_timer);
        }
        break;
    default:
        break;
    }
    return true;
}

/* Guest writes: invalid values are logged and ignored */
static void irq_sensor_guest_set(IrqSensorState *s, IrqSensorKnob k,
                                 uint64_t val)
{
    Error *err = NULL;

    if (!irq_sensor_set_knob(s, k, val, false, &err)) {
        qemu_log_mask(LOG_GUEST_ERROR, "%s (ignored)\n",
                      error_get_pretty(err));
        error_free(err);
    }
}

static void irq_sensor_fire(IrqSensorState *s)
{
    irq_sensor_raise(s, irq_sensor_now());
}

static void irq_sensor_clear_stats(IrqSensorState *s)
{
    memset(s->cnt, 0, sizeof(s->cnt));
    memset(s->stats, 0, sizeof(s->stats));
}

static void irq_sensor_reset_state(IrqSensorState *s)
{
    int i;

    timer_del(&s->gen_timer);
    timer_del(&s->deadline_timer);
    for (i = 0; i < KNOB__MAX; i++) {
        s->knob[i] = irq_sensor_knobs[i].reset;
    }
    s->status = 0;
    memset(s->latch, 0, sizeof(s->latch));
    s->latch_head = 0;
    s->latch_count = 0;
    memset(s->ring, 0, sizeof(s->ring));
    s->next_seq = 1;
    irq_sensor_seed(s);
    s->gen_anchor = 0;
    s->gen_due = 0;
    s->burst_idx = 0;
    s->gen_events = 0;
    s->instant = 0;
    s->instant_events = 0;
    s->gen_held_ns = 0;
    irq_sensor_clear_stats(s);
    memset(s->stamp, 0, sizeof(s->stamp));
    s->wr_lo_addr = IRQ_SENSOR_NO_ADDR;
    s->wr_lo_val = 0;
    s->rd_snap_addr = IRQ_SENSOR_NO_ADDR;
    s->rd_snap_hi = 0;
    irq_sensor_update_intx(s);
}

static void irq_sensor_do_reset(IrqSensorState *s)
{
    irq_sensor_reset_state(s);
    irq_sensor_log(s, "reset", irq_sensor_now(), "%s", "");
}

/* MMIO */

static uint32_t irq_sensor_caps(IrqSensorState *s)
{
    uint32_t caps = IRQ_SENSOR_CAP_INTX |
                    (IRQ_SENSOR_LATCH_MAX << IRQ_SENSOR_CAP_LATCH_MAX_SHIFT);

    if (s->irq_mode == IRQ_SENSOR_IRQ_MSIX) {
        caps |= IRQ_SENSOR_CAP_MSIX;
    } else if (s->irq_mode == IRQ_SENSOR_IRQ_MSI) {
        caps |= IRQ_SENSOR_CAP_MSI;
    }
    return caps;
}

/* Stage of a STATS block address, or -1 */
static int irq_sensor_stats_stage(hwaddr addr)
{
    if (addr < IRQ_SENSOR_REG_STATS(0) ||
        addr >= IRQ_SENSOR_REG_STATS(IRQ_SENSOR_NR_STAGES)) {
        return -1;
    }
    return (addr - IRQ_SENSOR_REG_STATS(0)) / 0x100;
}

/* The 64-bit register at 8-aligned @addr; false if there is none */
static bool irq_sensor_reg64(IrqSensorState *s, hwaddr addr, uint64_t *val)
{
    IrqSensorSample *head = irq_sensor_head(s);
    IrqSensorStageStats *st;
    int stage, i;

    switch (addr) {
    case IRQ_SENSOR_REG_PERIOD:
        *val = s->knob[KNOB_PERIOD];
        return true;
    case IRQ_SENSOR_REG_DEADLINE:
        *val = s->knob[KNOB_DEADLINE];
        return true;
    case IRQ_SENSOR_REG_NOW:
        *val = irq_sensor_now();
        return true;
    case IRQ_SENSOR_REG_SAMPLE_T_RAISE:
        *val = head ? head->t_raise : 0;
        return true;
    }
    for (i = 0; i < IRQ_SENSOR_NR_STAGES; i++) {
        if (addr == IRQ_SENSOR_REG_STAMP(i)) {
            *val = s->stamp[i];
            return true;
        }
    }
    for (i = 0; i < CNT__MAX; i++) {
        if (addr == irq_sensor_counters[i].reg) {
            *val = s->cnt[i];
            return true;
        }
    }
    stage = irq_sensor_stats_stage(addr);
    if (stage < 0) {
        return false;
    }
    st = &s->stats[stage];
    switch (addr - IRQ_SENSOR_REG_STATS(stage)) {
    case IRQ_SENSOR_STATS_COUNT:
        *val = st->count;
        return true;
    case IRQ_SENSOR_STATS_MIN:
        *val = st->min;
        return true;
    case IRQ_SENSOR_STATS_MAX:
        *val = st->max;
        return true;
    case IRQ_SENSOR_STATS_SUM:
        *val = st->sum;
        return true;
    }
    return false;
}

/* The 32-bit register at @addr; false if there is none */
static bool irq_sensor_reg32(IrqSensorState *s, hwaddr addr, uint32_t *val)
{
    IrqSensorSample *head = irq_sensor_head(s);
    hwaddr off;
    int stage;

    switch (addr) {
    case IRQ_SENSOR_REG_ID:
        *val = IRQ_SENSOR_ID_MAGIC;
        return true;
    case IRQ_SENSOR_REG_VERSION:
        *val = IRQ_SENSOR_VERSION;
        return true;
    case IRQ_SENSOR_REG_CAPS:
        *val = irq_sensor_caps(s);
        return true;
    case IRQ_SENSOR_REG_CTRL:
        *val = (s->knob[KNOB_RUN] ? IRQ_SENSOR_CTRL_RUN : 0) |
               (s->knob[KNOB_IRQ_EN] ? IRQ_SENSOR_CTRL_IRQ_EN : 0);
        return true;
    case IRQ_SENSOR_REG_MODE:
        *val = s->knob[KNOB_MODE];
        return true;
    case IRQ_SENSOR_REG_JITTER:
        *val = s->knob[KNOB_JITTER];
        return true;
    case IRQ_SENSOR_REG_BURST_COUNT:
        *val = s->knob[KNOB_BURST_COUNT];
        return true;
    case IRQ_SENSOR_REG_BURST_GAP:
        *val = s->knob[KNOB_BURST_GAP];
        return true;
    case IRQ_SENSOR_REG_SEED:
        *val = s->knob[KNOB_SEED];
        return true;
    case IRQ_SENSOR_REG_LATCH_DEPTH:
        *val = s->knob[KNOB_LATCH_DEPTH];
        return true;
    case IRQ_SENSOR_REG_FAULTS:
        *val = s->knob[KNOB_STUCK_INTX] ? IRQ_SENSOR_FAULT_STUCK_INTX : 0;
        return true;
    case IRQ_SENSOR_REG_SPURIOUS_EVERY:
        *val = s->knob[KNOB_SPURIOUS_EVERY];
        return true;
    case IRQ_SENSOR_REG_DROP_EVERY:
        *val = s->knob[KNOB_DROP_EVERY];
        return true;
    case IRQ_SENSOR_REG_STATUS:
        *val = s->status | (head ? IRQ_SENSOR_STATUS_SAMPLE : 0);
        return true;
    case IRQ_SENSOR_REG_LATCH_COUNT:
        *val = s->latch_count;
        return true;
    case IRQ_SENSOR_REG_SAMPLE_SEQ:
        *val = head ? head->seq : 0;
        return true;
    case IRQ_SENSOR_REG_SAMPLE_VALUE:
        *val = head ? IRQ_SENSOR_SAMPLE_VALUE(head->seq) : 0;
        return true;
    case IRQ_SENSOR_REG_ACK(IRQ_SENSOR_STAGE_HARD):
    case IRQ_SENSOR_REG_ACK(IRQ_SENSOR_STAGE_THREAD):
    case IRQ_SENSOR_REG_ACK(IRQ_SENSOR_STAGE_USER):
        *val = 0;   /* write-only */
        return true;
    }
    stage = irq_sensor_stats_stage(addr);
    off = addr - IRQ_SENSOR_REG_STATS(stage);
    if (stage >= 0 && off >= IRQ_SENSOR_STATS_HIST &&
        off < IRQ_SENSOR_STATS_HIST + 4 * IRQ_SENSOR_HIST_BUCKETS) {
        *val = s->stats[stage].hist[(off - IRQ_SENSOR_STATS_HIST) / 4];
        return true;
    }
    return false;
}

static uint32_t irq_sensor_read32(IrqSensorState *s, hwaddr addr)
{
    hwaddr base = addr & ~7ULL;
    uint64_t v64;
    uint32_t v;

    if (irq_sensor_reg64(s, base, &v64)) {
        if (addr == base) {
            /* the high half read next returns this same value's top */
            s->rd_snap_addr = base;
            s->rd_snap_hi = v64 >> 32;
            return v64;
        }
        if (s->rd_snap_addr == base) {
            s->rd_snap_addr = IRQ_SENSOR_NO_ADDR;
            return s->rd_snap_hi;
        }
        return v64 >> 32;
    }
    if (irq_sensor_reg32(s, addr, &v)) {
        return v;
    }
    qemu_log_mask(LOG_GUEST_ERROR, "irq-sensor: read of unknown register "
                  "0x%03" HWADDR_PRIx "\n", addr);
    return 0;
}

static uint64_t irq_sensor_mmio_read(void *opaque, hwaddr addr, unsigned size)
{
    IrqSensorState *s = opaque;
    uint64_t v;

    if (size == 8) {
        if (irq_sensor_reg64(s, addr, &v)) {
            return v;
        }
        return irq_sensor_read32(s, addr) |
               (uint64_t)irq_sensor_read32(s, addr + 4) << 32;
    }
    return irq_sensor_read32(s, addr);
}

static void irq_sensor_write_ctrl(IrqSensorState *s, uint32_t val)
{
    const uint32_t known = IRQ_SENSOR_CTRL_RW_MASK | IRQ_SENSOR_CTRL_FIRE |
                           IRQ_SENSOR_CTRL_CLEAR_STATS | IRQ_SENSOR_CTRL_RESET;

    if (val & IRQ_SENSOR_CTRL_RESET) {
        irq_sensor_do_reset(s);
        return;
    }
    if (val & ~known) {
        qemu_log_mask(LOG_GUEST_ERROR, "irq-sensor: CTRL: reserved bits "
                      "0x%x ignored\n", val & ~known);
    }
    if (val & IRQ_SENSOR_CTRL_CLEAR_STATS) {
        irq_sensor_clear_stats(s);
    }
    /* IRQ_EN before RUN and FIRE: "IRQ_EN | FIRE" must interrupt */
    irq_sensor_guest_set(s, KNOB_IRQ_EN, !!(val & IRQ_SENSOR_CTRL_IRQ_EN));
    irq_sensor_guest_set(s, KNOB_RUN, !!(val & IRQ_SENSOR_CTRL_RUN));
    if (val & IRQ_SENSOR_CTRL_FIRE) {
        irq_sensor_fire(s);
    }
}

static bool irq_sensor_writable64(hwaddr base, IrqSensorKnob *k)
{
    switch (base) {
    case IRQ_SENSOR_REG_PERIOD:
        *k = KNOB_PERIOD;
        return true;
    case IRQ_SENSOR_REG_DEADLINE:
        *k = KNOB_DEADLINE;
        return true;
    default:
        return false;
    }
}

/*
 * A 4-byte write to the low word sets the register to that (zero-extended)
 * value, so 32-bit values take one write; a following high-word write
 * completes the 64-bit value from the low word written just before it.
 */
static void irq_sensor_write_half(IrqSensorState *s, hwaddr addr,
                                  IrqSensorKnob k, uint32_t val)
{
    hwaddr base = addr & ~7ULL;
    uint32_t lo;

    if (addr == base) {
        s->wr_lo_addr = base;
        s->wr_lo_val = val;
        irq_sensor_guest_set(s, k, val);
        return;
    }
    lo = s->wr_lo_addr == base ? s->wr_lo_val : (uint32_t)s->knob[k];
    s->wr_lo_addr = IRQ_SENSOR_NO_ADDR;
    irq_sensor_guest_set(s, k, (uint64_t)val << 32 | lo);
}

static void irq_sensor_write32(IrqSensorState *s, hwaddr addr, uint32_t val)
{
    hwaddr base = addr & ~7ULL;
    IrqSensorKnob k;
    uint64_t v64;
    uint32_t v32;

    if (irq_sensor_writable64(base, &k)) {
        irq_sensor_write_half(s, addr, k, val);
        return;
    }

    switch (addr) {
    case IRQ_SENSOR_REG_CTRL:
        irq_sensor_write_ctrl(s, val);
        return;
    case IRQ_SENSOR_REG_MODE:
        irq_sensor_guest_set(s, KNOB_MODE, val);
        return;
    case IRQ_SENSOR_REG_JITTER:
        irq_sensor_guest_set(s, KNOB_JITTER, val);
        return;
    case IRQ_SENSOR_REG_BURST_COUNT:
        irq_sensor_guest_set(s, KNOB_BURST_COUNT, val);
        return;
    case IRQ_SENSOR_REG_BURST_GAP:
        irq_sensor_guest_set(s, KNOB_BURST_GAP, val);
        return;
    case IRQ_SENSOR_REG_SEED:
        irq_sensor_guest_set(s, KNOB_SEED, val);
        return;
    case IRQ_SENSOR_REG_LATCH_DEPTH:
        irq_sensor_guest_set(s, KNOB_LATCH_DEPTH, val);
        return;
    case IRQ_SENSOR_REG_SPURIOUS_EVERY:
        irq_sensor_guest_set(s, KNOB_SPURIOUS_EVERY, val);
        return;
    case IRQ_SENSOR_REG_DROP_EVERY:
        irq_sensor_guest_set(s, KNOB_DROP_EVERY, val);
        return;
    case IRQ_SENSOR_REG_FAULTS:
        if (val & ~IRQ_SENSOR_FAULT_STUCK_INTX) {
            qemu_log_mask(LOG_GUEST_ERROR, "irq-sensor: FAULTS: reserved "
                          "bits 0x%x ignored\n",
                          val & ~IRQ_SENSOR_FAULT_STUCK_INTX);
        }
        irq_sensor_guest_set(s, KNOB_STUCK_INTX,
                             !!(val & IRQ_SENSOR_FAULT_STUCK_INTX));
        return;
    case IRQ_SENSOR_REG_STATUS:
        /* SAMPLE mirrors the latch and cannot be cleared */
        s->status &= ~(val & (IRQ_SENSOR_STATUS_SPURIOUS |
                              IRQ_SENSOR_STATUS_LOST));
        irq_sensor_update_intx(s);
        return;
    case IRQ_SENSOR_REG_ACK(IRQ_SENSOR_STAGE_HARD):
        irq_sensor_ack(s, IRQ_SENSOR_STAGE_HARD, val);
        return;
    case IRQ_SENSOR_REG_ACK(IRQ_SENSOR_STAGE_THREAD):
        irq_sensor_ack(s, IRQ_SENSOR_STAGE_THREAD, val);
        return;
    case IRQ_SENSOR_REG_ACK(IRQ_SENSOR_STAGE_USER):
        irq_sensor_ack(s, IRQ_SENSOR_STAGE_USER, val);
        return;
    }
    if (irq_sensor_reg64(s, base, &v64) || irq_sensor_reg32(s, addr, &v32)) {
        qemu_log_mask(LOG_GUEST_ERROR, "irq-sensor: write 0x%x to read-only "
                      "register 0x%03" HWADDR_PRIx " ignored\n", val, addr);
        return;
    }
    qemu_log_mask(LOG_GUEST_ERROR, "irq-sensor: write 0x%x to unknown "
                  "register 0x%03" HWADDR_PRIx " ignored\n", val, addr);
}

static void irq_sensor_mmio_write(void *opaque, hwaddr addr, uint64_t val,
                                  unsigned size)
{
    IrqSensorState *s = opaque;
    IrqSensorKnob k;

    if (size == 8) {
        if (irq_sensor_writable64(addr, &k)) {
            s->wr_lo_addr = IRQ_SENSOR_NO_ADDR;
            irq_sensor_guest_set(s, k, val);
            return;
        }
        irq_sensor_write32(s, addr, val);
        irq_sensor_write32(s, addr + 4, val >> 32);
        return;
    }
    irq_sensor_write32(s, addr, val);
}

static const MemoryRegionOps irq_sensor_mmio_ops = {
    .read = irq_sensor_mmio_read,
    .write = irq_sensor_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 8,
    },
    .impl = {
        .min_access_size = 4,
        .max_access_size = 8,
    },
};

/* PCI */

static void irq_sensor_write_config(PCIDevice *pdev, uint32_t addr,
                                    uint32_t val, int len)
{
    pci_default_write_config(pdev, addr, val, len);
    /* enabling or disabling MSI/MSI-X moves the fallback to INTx */
    irq_sensor_update_intx(IRQ_SENSOR(pdev));
}

static void irq_sensor_realize(PCIDevice *pdev, Error **errp)
{
    IrqSensorState *s = IRQ_SENSOR(pdev);

    pci_config_set_interrupt_pin(pdev->config, 1);
    memory_region_init_io(&s->mmio, OBJECT(s), &irq_sensor_mmio_ops, s,
                          "irq-sensor-mmio", IRQ_SENSOR_MMIO_SIZE);
    pci_register_bar(pdev, 0, PCI_BASE_ADDRESS_SPACE_MEMORY, &s->mmio);

    switch (s->irq_mode) {
    case IRQ_SENSOR_IRQ_MSIX:
        if (msix_init_exclusive_bar(pdev, IRQ_SENSOR_MSIX_VECTORS,
                                    IRQ_SENSOR_MSIX_BAR, errp)) {
            return;
        }
        msix_vector_use(pdev, 0);
        break;
    case IRQ_SENSOR_IRQ_MSI:
        if (msi_init(pdev, 0, 1, true, true, errp)) {
            return;
        }
        break;
    default:
        break;
    }

    timer_init_ns(&s->gen_timer, QEMU_CLOCK_VIRTUAL, irq_sensor_gen_cb, s);
    timer_init_ns(&s->deadline_timer, QEMU_CLOCK_VIRTUAL,
                  irq_sensor_deadline_cb, s);
    irq_sensor_reset_state(s);
}

static void irq_sensor_exit(PCIDevice *pdev)
{
    IrqSensorState *s = IRQ_SENSOR(pdev);

    timer_del(&s->gen_timer);
    timer_del(&s->deadline_timer);
    if (s->irq_mode == IRQ_SENSOR_IRQ_MSIX) {
        msix_uninit_exclusive_bar(pdev);
    }
    msi_uninit(pdev);
}

static void irq_sensor_qdev_reset(DeviceState *dev)
{
    irq_sensor_do_reset(IRQ_SENSOR(dev));
}

/* QOM properties (host control) */

static bool irq_sensor_check_realized(Object *obj, const char *name,
                                      Error **errp)
{
    if (!DEVICE(obj)->realized) {
        /* reset would overwrite it anyway */
        error_setg(errp, "irq-sensor: '%s' is a run-time knob: set it with "
                   "qom-set or from the guest once the machine runs", name);
        return false;
    }
    return true;
}

static void irq_sensor_prop_get_knob(Object *obj, Visitor *v,
                                     const char *name, void *opaque,
                                     Error **errp)
{
    IrqSensorState *s = IRQ_SENSOR(obj);
    const IrqSensorKnobInfo *ki = opaque;
    uint64_t val = s->knob[ki - irq_sensor_knobs];
    uint32_t v32 = val;
    bool b = val;

    switch (ki->type) {
    case KT_BOOL:
        visit_type_bool(v, name, &b, errp);
        break;
    case KT_U32:
        visit_type_uint32(v, name, &v32, errp);
        break;
    default:
        visit_type_uint64(v, name, &val, errp);
        break;
    }
}

static void irq_sensor_prop_set_knob(Object *obj, Visitor *v,
                                     const char *name, void *opaque,
                                     Error **errp)
{
    IrqSensorState *s = IRQ_SENSOR(obj);
    const IrqSensorKnobInfo *ki = opaque;
    uint64_t val;
    uint32_t v32;
    bool b;

    if (!irq_sensor_check_realized(obj, name, errp)) {
        return;
    }
    switch (ki->type) {
    case KT_BOOL:
        if (!visit_type_bool(v, name, &b, errp)) {
            return;
        }
        val = b;
        break;
    case KT_U32:
        if (!visit_type_uint32(v, name, &v32, errp)) {
            return;
        }
        val = v32;
        break;
    default:
        if (!visit_type_uint64(v, name, &val, errp)) {
            return;
        }
        break;
    }
    irq_sensor_set_knob(s, ki - irq_sensor_knobs, val, true, errp);
}

static int irq_sensor_prop_get_mode(Object *obj, Error **errp)
{
    return IRQ_SENSOR(obj)->knob[KNOB_MODE];
}

static void irq_sensor_prop_set_mode(Object *obj, int value, Error **errp)
{
    if (irq_sensor_check_realized(obj, "mode", errp)) {
        irq_sensor_set_knob(IRQ_SENSOR(obj), KNOB_MODE, value, true, errp);
    }
}

static bool irq_sensor_prop_get_false(Object *obj, Error **errp)
{
    return false;
}

static void irq_sensor_prop_set_fire(Object *obj, bool value, Error **errp)
{
    if (value && irq_sensor_check_realized(obj, "fire", errp)) {
        irq_sensor_fire(IRQ_SENSOR(obj));
    }
}

static void irq_sensor_prop_set_clear_stats(Object *obj, bool value,
                                            Error **errp)
{
    if (value && irq_sensor_check_realized(obj, "clear-stats", errp)) {
        irq_sensor_clear_stats(IRQ_SENSOR(obj));
    }
}

static void irq_sensor_prop_get_counter(Object *obj, Visitor *v,
                                        const char *name, void *opaque,
                                        Error **errp)
{
    const IrqSensorCounterInfo *ci = opaque;
    uint64_t val = IRQ_SENSOR(obj)->cnt[ci - irq_sensor_counters];

    visit_type_uint64(v, name, &val, errp);
}

static char *irq_sensor_prop_get_stats(Object *obj, Error **errp)
{
    IrqSensorState *s = IRQ_SENSOR(obj);
    GString *js = g_string_new("{");
    int i, b;

    for (i = 0; i < CNT__MAX; i++) {
        g_string_append_printf(js, "\"%s\":%" PRIu64 ",",
                               irq_sensor_counters[i].name, s->cnt[i]);
    }
    g_string_append(js, "\"stages\":{");
    for (i = 0; i < IRQ_SENSOR_NR_STAGES; i++) {
        IrqSensorStageStats *st = &s->stats[i];

        g_string_append_printf(js, "%s\"%s\":{\"count\":%" PRIu64
                               ",\"min\":%" PRIu64 ",\"max\":%" PRIu64
                               ",\"sum\":%" PRIu64 ",\"hist\":[",
                               i ? "," : "", irq_sensor_stage_names[i],
                               st->count, st->min, st->max, st->sum);
        for (b = 0; b < IRQ_SENSOR_HIST_BUCKETS; b++) {
            g_string_append_printf(js, "%s%u", b ? "," : "", st->hist[b]);
        }
        g_string_append(js, "]}");
    }
    g_string_append(js, "}}");
    return g_string_free(js, false);
}

/*
 * Both clocks read together, so that a tool can put the log's virtual
 * times on the host's CLOCK_MONOTONIC (QEMU_CLOCK_REALTIME): without
 * icount the two advance together while the VM runs.
 */
static char *irq_sensor_prop_get_clock_sync(Object *obj, Error **errp)
{
    int64_t virt = irq_sensor_now();
    int64_t host = qemu_clock_get_ns(QEMU_CLOCK_REALTIME);

    return g_strdup_printf("{\"virtual\":%" PRId64 ",\"host\":%" PRId64 "}",
                           virt, host);
}

/*
 * Static properties: irq-mode (an enum), the log chardev, late-skip-ns,
 * log-max-bytes
 */

static void irq_sensor_get_irq_mode(Object *obj, Visitor *v, const char *name,
                                    void *opaque, Error **errp)
{
    const Property *prop = opaque;
    int *ptr = object_field_prop_ptr(obj, prop);

    visit_type_enum(v, name, ptr, prop->info->enum_table, errp);
}

static void irq_sensor_set_irq_mode(Object *obj, Visitor *v, const char *name,
                                    void *opaque, Error **errp)
{
    const Property *prop = opaque;
    int *ptr = object_field_prop_ptr(obj, prop);

    visit_type_enum(v, name, ptr, prop->info->enum_table, errp);
}

static void irq_sensor_irq_mode_default(ObjectProperty *op,
                                        const Property *prop)
{
    object_property_set_default_str(op,
        qapi_enum_lookup(prop->info->enum_table, prop->defval.i));
}

static const PropertyInfo irq_sensor_prop_irq_mode = {
    .type = "IrqSensorIrqMode",
    .description = "interrupt delivery: msix, msi or intx (INTx is also "
                   "used while the guest has MSI/MSI-X disabled)",
    .enum_table = &irq_sensor_irq_mode_lookup,
    .get = irq_sensor_get_irq_mode,
    .set = irq_sensor_set_irq_mode,
    .set_default_value = irq_sensor_irq_mode_default,
};

static const Property irq_sensor_properties[] = {
    DEFINE_PROP_SIGNED("irq-mode", IrqSensorState, irq_mode,
                       IRQ_SENSOR_IRQ_MSIX, irq_sensor_prop_irq_mode, int),
    DEFINE_PROP_CHR("log", IrqSensorState, log),
    DEFINE_PROP_UINT64("late-skip-ns", IrqSensorState, late_skip_ns, 0),
    DEFINE_PROP_UINT64("log-max-bytes", IrqSensorState, log_max_bytes,
                       IRQ_SENSOR_LOG_MAX_BYTES),
};

/* Migration */

static int irq_sensor_post_load(void *opaque, int version_id)
{
    IrqSensorState *s = opaque;
    int i;

    /* never trust a stream: indexes below must stay in bounds */
    for (i = 0; i < KNOB__MAX; i++) {
        if (s->knob[i] < irq_sensor_knobs[i].min ||
            s->knob[i] > irq_sensor_knobs[i].max) {
            return -EINVAL;
        }
    }
    if (s->latch_head >= IRQ_SENSOR_LATCH_MAX ||
        s->latch_count > s->knob[KNOB_LATCH_DEPTH]) {
        return -EINVAL;
    }
    return 0;
}

static const VMStateDescription vmstate_irq_sensor_sample = {
    .name = "irq-sensor/sample",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(seq, IrqSensorSample),
        VMSTATE_BOOL(irq, IrqSensorSample),
        VMSTATE_INT64(t_raise, IrqSensorSample),
        VMSTATE_END_OF_LIST()
    }
};

static const VMStateDescription vmstate_irq_sensor_ring_entry = {
    .name = "irq-sensor/ring-entry",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(seq, IrqSensorRingEntry),
        VMSTATE_UINT32(acked, IrqSensorRingEntry),
        VMSTATE_INT64(t_raise, IrqSensorRingEntry),
        VMSTATE_END_OF_LIST()
    }
};

static const VMStateDescription vmstate_irq_sensor_stage_stats = {
    .name = "irq-sensor/stage-stats",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT64(count, IrqSensorStageStats),
        VMSTATE_UINT64(min, IrqSensorStageStats),
        VMSTATE_UINT64(max, IrqSensorStageStats),
        VMSTATE_UINT64(sum, IrqSensorStageStats),
        VMSTATE_UINT32_ARRAY(hist, IrqSensorStageStats,
                             IRQ_SENSOR_HIST_BUCKETS),
        VMSTATE_END_OF_LIST()
    }
};

static const VMStateDescription vmstate_irq_sensor = {
    .name = TYPE_IRQ_SENSOR,
    /*
     * 2: gen_due and the host-late counter; 3: the stale-acks counter.
     * Older streams are not read.
     */
    .version_id = 3,
    .minimum_version_id = 3,
    .post_load = irq_sensor_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_PCI_DEVICE(parent_obj, IrqSensorState),
        VMSTATE_MSIX(parent_obj, IrqSensorState),
        VMSTATE_UINT64_ARRAY(knob, IrqSensorState, KNOB__MAX),
        VMSTATE_UINT32(status, IrqSensorState),
        VMSTATE_STRUCT_ARRAY(latch, IrqSensorState, IRQ_SENSOR_LATCH_MAX, 1,
                             vmstate_irq_sensor_sample, IrqSensorSample),
        VMSTATE_UINT32(latch_head, IrqSensorState),
        VMSTATE_UINT32(latch_count, IrqSensorState),
        VMSTATE_STRUCT_ARRAY(ring, IrqSensorState, IRQ_SENSOR_RING_SIZE, 1,
                             vmstate_irq_sensor_ring_entry,
                             IrqSensorRingEntry),
        VMSTATE_UINT32(next_seq, IrqSensorState),
        VMSTATE_UINT64(prng, IrqSensorState),
        VMSTATE_INT64(gen_anchor, IrqSensorState),
        VMSTATE_INT64(gen_due, IrqSensorState),
        VMSTATE_UINT32(burst_idx, IrqSensorState),
        VMSTATE_UINT64(gen_events, IrqSensorState),
        VMSTATE_UINT64_ARRAY(cnt, IrqSensorState, CNT__MAX),
        VMSTATE_STRUCT_ARRAY(stats, IrqSensorState, IRQ_SENSOR_NR_STAGES, 1,
                             vmstate_irq_sensor_stage_stats,
                             IrqSensorStageStats),
        VMSTATE_INT64_ARRAY(stamp, IrqSensorState, IRQ_SENSOR_NR_STAGES),
        VMSTATE_UINT32(wr_lo_addr, IrqSensorState),
        VMSTATE_UINT32(wr_lo_val, IrqSensorState),
        VMSTATE_UINT32(rd_snap_addr, IrqSensorState),
        VMSTATE_UINT32(rd_snap_hi, IrqSensorState),
        VMSTATE_TIMER(gen_timer, IrqSensorState),
        VMSTATE_TIMER(deadline_timer, IrqSensorState),
        VMSTATE_END_OF_LIST()
    }
};

static void irq_sensor_class_init(ObjectClass *oc, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(oc);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(oc);
    int i;

    k->realize = irq_sensor_realize;
    k->exit = irq_sensor_exit;
    k->config_write = irq_sensor_write_config;
    k->vendor_id = IRQ_SENSOR_VENDOR_ID;
    k->device_id = IRQ_SENSOR_DEVICE_ID;
    k->revision = IRQ_SENSOR_REVISION;
    k->class_id = PCI_CLASS_OTHERS;
    dc->desc = "irqrig interrupt-latency sensor";
    device_class_set_legacy_reset(dc, irq_sensor_qdev_reset);
    dc->vmsd = &vmstate_irq_sensor;
    set_bit(DEVICE_CATEGORY_MISC, dc->categories);

    device_class_set_props(dc, irq_sensor_properties);
    object_class_property_set_description(oc, "log",
        "chardev for the event log (one JSON object per line)");
    object_class_property_set_description(oc, "late-skip-ns",
        "a generator event the host runs more than this many ns late is "
        "counted (host-late) and not raised; 0 = raise it anyway");
    object_class_property_set_description(oc, "log-max-bytes",
        "the event log stops, with a last log_full line, at this size; "
        "0 = no cap");

    for (i = 0; i < KNOB__MAX; i++) {
        const IrqSensorKnobInfo *ki = &irq_sensor_knobs[i];

        switch (ki->type) {
        case KT_MODE:
            object_class_property_add_enum(oc, ki->name, "IrqSensorMode",
                                           &irq_sensor_mode_lookup,
                                           irq_sensor_prop_get_mode,
                                           irq_sensor_prop_set_mode);
            break;
        default:
            object_class_property_add(oc, ki->name,
                                      ki->type == KT_BOOL ? "bool" :
                                      ki->type == KT_U32 ? "uint32" :
                                      "uint64",
                                      irq_sensor_prop_get_knob,
                                      irq_sensor_prop_set_knob,
                                      NULL, (void *)ki);
            break;
        }
        object_class_property_set_description(oc, ki->name, ki->desc);
    }

    object_class_property_add_bool(oc, "fire", irq_sensor_prop_get_false,
                                   irq_sensor_prop_set_fire);
    object_class_property_set_description(oc, "fire",
        "set true to raise one sample now (CTRL.FIRE); reads false");
    object_class_property_add_bool(oc, "clear-stats",
                                   irq_sensor_prop_get_false,
                                   irq_sensor_prop_set_clear_stats);
    object_class_property_set_description(oc, "clear-stats",
        "set true to zero counters and stats (CTRL.CLEAR_STATS); "
        "reads false");

    for (i = 0; i < CNT__MAX; i++) {
        const IrqSensorCounterInfo *ci = &irq_sensor_counters[i];
        g_autofree char *desc = g_strdup_printf("read-only counter: %s",
                                                ci->desc);

        object_class_property_add(oc, ci->name, "uint64",
                                  irq_sensor_prop_get_counter, NULL, NULL,
                                  (void *)ci);
        object_class_property_set_description(oc, ci->name, desc);
    }

    object_class_property_add_str(oc, "stats", irq_sensor_prop_get_stats,
                                  NULL);
    object_class_property_set_description(oc, "stats",
        "read-only JSON: all counters and per-stage latency "
        "{count,min,max,sum,hist}");
    object_class_property_add_str(oc, "clock-sync",
                                  irq_sensor_prop_get_clock_sync, NULL);
    object_class_property_set_description(oc, "clock-sync",
        "read-only JSON {virtual,host}: the virtual clock and the host's "
        "monotonic clock (ns), read together");
}

static const TypeInfo irq_sensor_info = {
    .name = TYPE_IRQ_SENSOR,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(IrqSensorState),
    .class_init = irq_sensor_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_CONVENTIONAL_PCI_DEVICE },
        { },
    },
};

static void irq_sensor_register_types(void)
{
    type_register_static(&irq_sensor_info);
}

type_init(irq_sensor_register_types)
