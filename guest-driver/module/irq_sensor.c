// SPDX-License-Identifier: GPL-2.0
/*
 * irq_sensor.ko: driver for irqrig's "irq-sensor" QEMU PCI device.
 *
 * The device raises timestamped interrupts; we acknowledge every sample at
 * three stages by writing its sequence number to a stage register, and the
 * device measures each stage against its own (virtual) clock:
 *
 *   stage 1, hard:   sensor_irq(), the handler registered with request_irq()
 *   stage 2, thread: sensor_work_fn(), a SCHED_FIFO kthread_worker
 *   stage 3, user:   IRQ_SENSOR_IOC_ACK_USER from whoever read(2) the sample
 *
 * The driver is written in the OLD style that the 2005 "local_irq_disable
 * removal" patch (and irqrig's CONFIG_RT_IRQ_DISABLE series) targets: a
 * plain handler from request_irq() (force-threaded by PREEMPT_RT, which is
 * intended), and the state shared with that handler guarded with
 * local_irq_save() plus a raw spinlock.  See "Locking" below.
 *
 * The same source builds irq_sensor_unsafe.ko with
 * -DIRQ_SENSOR_UNSAFE_SOFT_GUARD: a test-only module that keeps the soft
 * guard even when its handler runs in hard context (IRQF_NODELAY), i.e. the
 * self-deadlock of the seed article, which the rig must catch.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/pci.h>
#include <linux/interrupt.h>
#include <linux/irqflags.h>
#include <linux/spinlock.h>
#include <linux/mutex.h>
#include <linux/kref.h>
#include <linux/idr.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/wait.h>
#include <linux/completion.h>
#include <linux/workqueue.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/timekeeping.h>
#include <linux/jiffies.h>
#include <linux/cpumask.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/uaccess.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/string.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/io.h>
#include <linux/io-64-nonatomic-lo-hi.h>

#include "irq_sensor_regs.h"
#include "irq_sensor_uapi.h"

/*
 * Build-time feature detection (never by kernel version): the
 * CONFIG_RT_IRQ_DISABLE series adds IRQF_NODELAY and hard_local_irq_*().
 *
 * SENSOR_HARD_GUARD: the guard can really mask the CPU when nodelay is on.
 * SENSOR_CAN_NODELAY: nodelay=1 is accepted.  The normal build needs both
 * IRQF_NODELAY and hard_local_irq_save(): a hard-context handler without a
 * hard guard is exactly the bug the unsafe build exists to demonstrate.
 */
#if defined(hard_local_irq_save) && !defined(IRQ_SENSOR_UNSAFE_SOFT_GUARD)
#define SENSOR_HARD_GUARD
#endif

#if defined(IRQF_NODELAY) && \
	(defined(SENSOR_HARD_GUARD) || defined(IRQ_SENSOR_UNSAFE_SOFT_GUARD))
#define SENSOR_CAN_NODELAY
#define SENSOR_IRQF_NODELAY	IRQF_NODELAY
#else
#define SENSOR_IRQF_NODELAY	0
#endif

#ifdef PCI_IRQ_INTX
#define SENSOR_PCI_IRQ_INTX	PCI_IRQ_INTX
#else
#define SENSOR_PCI_IRQ_INTX	PCI_IRQ_LEGACY
#endif

#define SENSOR_FIFO_SIZE	256	/* stage-2 FIFO entries, power of 2 */
#define SENSOR_READ_CHUNK	16	/* records copied to user per step */
#define SENSOR_UNTHROTTLE_MS	10	/* storm: IRQ_EN off this long */
#define SENSOR_HOG_MAX_US	1000000	/* 1 s, far below soft lockup */
#define SENSOR_HOG_PERIOD_MAX_US 10000000

/* Module parameters */

static char *irq_types = "msix,msi,intx";
module_param(irq_types, charp, 0444);
MODULE_PARM_DESC(irq_types,
		 "interrupt types to try, in the order MSI-X, MSI, INTx: comma list of msix, msi, intx (default all)");

static bool nodelay;
module_param(nodelay, bool, 0444);
MODULE_PARM_DESC(nodelay,
		 "request the handler with IRQF_NODELAY (needs a CONFIG_RT_IRQ_DISABLE kernel)");

static unsigned int storm_limit = 20000;
module_param(storm_limit, uint, 0644);
MODULE_PARM_DESC(storm_limit,
		 "interrupts per second before IRQ_EN is turned off for 10 ms (0 = never)");

static unsigned int ring_size = 4096;
module_param(ring_size, uint, 0444);
MODULE_PARM_DESC(ring_size, "records buffered for read(2), rounded up to a power of 2");

static unsigned int hog_us;
module_param(hog_us, uint, 0444);
MODULE_PARM_DESC(hog_us, "irq-off hog: length of each section in us (0 = off)");

static unsigned int hog_period_us = 10000;
module_param(hog_period_us, uint, 0444);
MODULE_PARM_DESC(hog_period_us, "irq-off hog: one section every this many us");

static int hog_cpu = -1;
module_param(hog_cpu, int, 0444);
MODULE_PARM_DESC(hog_cpu, "irq-off hog: CPU to run on (-1 = any)");

static bool shared_irq;
module_param(shared_irq, bool, 0444);
MODULE_PARM_DESC(shared_irq,
		 "request the handler with IRQF_SHARED on every irq type (for debugfs reqfree)");

#ifdef SENSOR_CAN_NODELAY
/*
 * Test only: the IRQF_NODELAY handler also calls an API that the NODELAY
 * contract forbids (its raw lock is soft in CONFIG_RT_IRQ_DISABLE), so
 * that the debug kernel's check can be seen to name it.  Each write arms
 * one such call, by the next interrupt that did not arrive inside a soft
 * section (sensor_violate()): one is enough to be named.  The check
 * names a lock once it has seen both uses of the same lock instance, so
 * the write itself makes the task-side (soft) use where no other code is
 * sure to: complete() takes the completion's lock; hrtimer_start() and
 * hrtimer_cancel() take the hrtimer base lock of the CPU the timer then
 * sits on, which is the one the handler's hrtimer_start() takes first
 * (the boot CPU's base may have no soft user of its own).
 */
enum {
	SENSOR_VIOLATE_NONE,
	SENSOR_VIOLATE_COMPLETE,	/* complete() */
	SENSOR_VIOLATE_QUEUE_WORK,	/* queue_work() */
	SENSOR_VIOLATE_HRTIMER,		/* hrtimer_start() */
	SENSOR_VIOLATE_MAX = SENSOR_VIOLATE_HRTIMER,
};

static unsigned int nodelay_violation;
static atomic_t sensor_nd_armed = ATOMIC_INIT(0);
static DECLARE_COMPLETION(sensor_nd_done);
static struct work_struct sensor_nd_work;
static struct hrtimer sensor_nd_timer;

static int sensor_nd_set(const char *val, const struct kernel_param *kp)
{
	unsigned int v;
	int ret = kstrtouint(val, 0, &v);

	if (ret)
		return ret;
	if (v > SENSOR_VIOLATE_MAX)
		return -EINVAL;
	WRITE_ONCE(nodelay_violation, v);
	if (v == SENSOR_VIOLATE_COMPLETE)
		complete(&sensor_nd_done);	/* takes its lock, soft */
	if (v == SENSOR_VIOLATE_HRTIMER) {
		hrtimer_start(&sensor_nd_timer, ms_to_ktime(1), HRTIMER_MODE_REL);
		hrtimer_cancel(&sensor_nd_timer);
	}
	atomic_set(&sensor_nd_armed, v != SENSOR_VIOLATE_NONE);
	return 0;
}

static const struct kernel_param_ops sensor_nd_ops = {
	.set	= sensor_nd_set,
	.get	= param_get_uint,
};
module_param_cb(nodelay_violation, &sensor_nd_ops, &nodelay_violation, 0644);
MODULE_PARM_DESC(nodelay_violation,
		 "TEST: with nodelay, the next interrupt's handler also calls 1 = complete(), 2 = queue_work(), 3 = hrtimer_start() (forbidden to IRQF_NODELAY handlers)");
#endif

static unsigned int sensor_irq_mask;	/* PCI_IRQ_* parsed from irq_types */
static struct dentry *sensor_dbg_root;
static DEFINE_IDA(sensor_ida);

/*
 * Locking
 * =======
 *
 * Shared with the interrupt handler (marked [G] below): the stage-2 FIFO,
 * the sample ring, the driver counters, the CTRL shadow and the storm
 * state.  Every access outside the handler - read(), poll(), ioctl(), the
 * stage-2 worker, the hog, debugfs - is a short section between
 * sensor_lock() and sensor_unlock(), OLD STYLE:
 *
 *   sensor_guard_save()   keeps the handler off this CPU (local_irq_save())
 *   raw_spin_lock()       keeps it off the other CPUs
 *
 * Why a raw_spinlock_t: on PREEMPT_RT a spinlock_t is a sleeping lock
 * (rt_mutex) and must not be taken with interrupts disabled; a raw
 * spinlock really spins and is the only lock allowed inside a
 * local_irq_save() section (and in hard interrupt context, see nodelay).
 * For the same reason nothing inside a section may sleep or take a
 * spinlock_t: no wake_up(), no allocation, no copy_to_user(); those happen
 * after sensor_unlock().
 *
 * The handler itself takes the same pair.  In hard interrupt context
 * (!PREEMPT_RT) interrupts are already off and local_irq_save() costs
 * nothing.  On PREEMPT_RT the core force-threads the handler: it runs in a
 * thread with interrupts on, and a section in read() or the worker is one
 * the handler thread cannot preempt on that CPU, just as a hard handler
 * could not interrupt it on a stock kernel.
 *
 * nodelay: with IRQF_NODELAY (CONFIG_RT_IRQ_DISABLE kernels) the handler
 * runs in hard interrupt context even while the CPU is "soft" irqs-off,
 * because there local_irq_save() only disables preemption.  A soft section
 * holding the raw lock would then be interrupted on its own CPU by the
 * handler, which spins on the lock forever: the self-deadlock of the seed
 * article.  So with nodelay the guard must really mask the CPU:
 * sensor_guard_save() uses hard_local_irq_save() (compiled only where the
 * kernel has it).  Without nodelay the soft guard is enough, because the
 * handler is a thread that cannot preempt a preempt-disabled section.
 *
 * irq_sensor_unsafe.ko (IRQ_SENSOR_UNSAFE_SOFT_GUARD) always uses the soft
 * guard, and its hog holds the lock for its whole length so the window is
 * wide.  Test only: the rig must catch it (lockdep: a lock taken in
 * hardirq context and with hardirqs on; or hang detection).
 *
 * Not shared with the handler, so plain sleeping locks:
 *   sd->mutex      ioctls, open/release, remove (and sd->dead for them)
 *   sd->read_mutex read() peek/commit of the ring (one reader at a time)
 *   sd->hog_mutex  starting/stopping the hog thread
 * Order: mutex -> read_mutex; hog_mutex is never nested.
 *
 * Stage 1 (sensor_service()) is never run twice at once: it runs from the
 * handler (the core serialises one irq), or with the line disabled
 * (disable_irq(): unthrottle, reset).  Its private state (hard_stamp)
 * needs no lock.
 */

struct sensor_dev {
	struct pci_dev *pdev;
	void __iomem *regs;
	struct kref kref;		/* open files + the PCI binding */
	int id;				/* N of /dev/irq-sensorN */
	char name[24];			/* "irq-sensorN" */
	int irq;
	const char *irq_type;		/* "msix", "msi" or "intx" */
	bool nodelay;			/* handler requested with IRQF_NODELAY */
	u32 latch_max;			/* from CAPS */

	/* [G] everything below up to the end marker */
	raw_spinlock_t lock;		/* [G] SMP half of the guard, see above */
	struct irq_sensor_sample fifo[SENSOR_FIFO_SIZE]; /* handler -> worker */
	unsigned int fifo_head;		/* free-running; written by stage 1 */
	unsigned int fifo_tail;		/* free-running; written by the worker */
	bool fifo_lost;			/* next FIFO entry gets F_RING_OVERFLOW */
	struct irq_sensor_sample *ring;	/* worker -> read() */
	unsigned int ring_mask;		/* ring_size - 1 */
	unsigned int ring_head;		/* free-running; written by the worker */
	unsigned int ring_tail;		/* free-running; written by read() */
	bool ring_lost;			/* next record gets F_RING_OVERFLOW */
	struct irq_sensor_counters cnt;	/* drv_* fields; dev_* come from MMIO */
	u32 ctrl;			/* wanted CTRL.RUN | CTRL.IRQ_EN */
	bool throttled;			/* storm: IRQ_EN forced off */
	unsigned long storm_start;	/* jiffies: start of the 1 s window */
	unsigned int storm_count;	/* interrupts in that window */
	bool dead;			/* device removed: set with mutex too */
	/* [G] end */

	u32 latch_depth;		/* bounds stage 1; READ_ONCE() */
	u64 hard_stamp;			/* stage 1 only: last STAMP(HARD) */

	struct mutex mutex;		/* ioctls, open/release, remove */
	unsigned int openers;
	bool keep_running;		/* IOC_KEEP_RUNNING */
	struct irq_sensor_config cfg;	/* last SET_CONFIG, for reset_done */
	bool cfg_valid;

	struct mutex read_mutex;	/* read(): ring peek/copy/commit */
	wait_queue_head_t readq;

	struct kthread_worker *worker;	/* stage 2 */
	struct kthread_work work;
	struct delayed_work unthrottle;

	struct mutex hog_mutex;		/* hog thread start/stop */
	struct task_struct *hog_task;
	struct irq_sensor_hog hog;	/* read by the hog thread while it runs */

	bool shared;			/* handler requested with IRQF_SHARED */
	int extra;			/* dev_id of debugfs reqfree's action */
	atomic_long_t reqfree_cycles;	/* request/free cycles done */

	struct miscdevice misc;
	struct dentry *dbg;
};

/* The guard: see "Locking" above */

static __always_inline unsigned long sensor_guard_save(const struct sensor_dev *sd)
{
	unsigned long flags;

#ifdef SENSOR_HARD_GUARD
	if (sd->nodelay) {
		/* a hard-context handler may interrupt a soft section */
		hard_local_irq_save(flags);
		return flags;
	}
#endif
	local_irq_save(flags);
	return flags;
}

static __always_inline void sensor_guard_restore(const struct sensor_dev *sd,
						 unsigned long flags)
{
#ifdef SENSOR_HARD_GUARD
	if (sd->nodelay) {
		hard_local_irq_restore(flags);
		return;
	}
#endif
	local_irq_restore(flags);
}

static __always_inline unsigned long sensor_lock(struct sensor_dev *sd)
{
	unsigned long flags = sensor_guard_save(sd);

	raw_spin_lock(&sd->lock);
	return flags;
}

static __always_inline void sensor_unlock(struct sensor_dev *sd, unsigned long flags)
{
	raw_spin_unlock(&sd->lock);
	sensor_guard_restore(sd, flags);
}

static const char *sensor_guard_name(const struct sensor_dev *sd)
{
#ifdef SENSOR_HARD_GUARD
	if (sd->nodelay)
		return "hard_local_irq_save";
#endif
	return "local_irq_save";
}

/* Registers */

static u32 sensor_rd(struct sensor_dev *sd, unsigned int reg)
{
	return readl(sd->regs + reg);
}

static void sensor_wr(struct sensor_dev *sd, unsigned int reg, u32 val)
{
	writel(val, sd->regs + reg);
}

static u64 sensor_rd64(struct sensor_dev *sd, unsigned int reg)
{
	return readq(sd->regs + reg);
}

static void sensor_wr64(struct sensor_dev *sd, unsigned int reg, u64 val)
{
	writeq(val, sd->regs + reg);
}

/*
 * CTRL sets RUN and IRQ_EN on every write, so every write carries the
 * wanted state (minus IRQ_EN while throttled) plus one-shot bits.
 * Caller holds the guard, so the shadow and the register change together.
 */
static void sensor_write_ctrl_locked(struct sensor_dev *sd, u32 oneshot)
{
	u32 val = sd->ctrl;

	if (sd->throttled)
		val &= ~IRQ_SENSOR_CTRL_IRQ_EN;
	sensor_wr(sd, IRQ_SENSOR_REG_CTRL, val | oneshot);
}

static void sensor_set_ctrl(struct sensor_dev *sd, u32 clear, u32 set, u32 oneshot)
{
	unsigned long flags = sensor_lock(sd);

	sd->ctrl = (sd->ctrl & ~clear) | set;
	if (!sd->dead)
		sensor_write_ctrl_locked(sd, oneshot);
	sensor_unlock(sd, flags);
}

/* Stage 1: the hard handler */

/*
 * Take up to @max samples from the latch, hard-acking each: MMIO only, no
 * shared state.  The ack is checked through STAMP(HARD), which the device
 * updates on good acks only: a head that expired between our read and our
 * ack is refused (and counted lost by the device), and must not go on to
 * stages 2 and 3, where it would only add bad acks.  A good ack also
 * proves that VALUE and T_RAISE, read in between, belong to @seq (the
 * head only moves forward, and only our ack pops it).
 */
static unsigned int sensor_take_samples(struct sensor_dev *sd,
					struct irq_sensor_sample *batch,
					unsigned int max, unsigned int *refused,
					unsigned int *bad_values)
{
	unsigned int i, n = 0;

	for (i = 0; i < max; i++) {
		u32 seq = sensor_rd(sd, IRQ_SENSOR_REG_SAMPLE_SEQ);
		u32 value;
		u64 t_raise, stamp;

		if (!seq)
			break;		/* latch empty */
		value = sensor_rd(sd, IRQ_SENSOR_REG_SAMPLE_VALUE);
		t_raise = sensor_rd64(sd, IRQ_SENSOR_REG_SAMPLE_T_RAISE);
		sensor_wr(sd, IRQ_SENSOR_REG_ACK(IRQ_SENSOR_STAGE_HARD), seq);
		stamp = sensor_rd64(sd, IRQ_SENSOR_REG_STAMP(IRQ_SENSOR_STAGE_HARD));
		if (stamp == sd->hard_stamp) {
			(*refused)++;
			continue;
		}
		sd->hard_stamp = stamp;
		if (value != IRQ_SENSOR_SAMPLE_VALUE(seq))
			(*bad_values)++;
		batch[n].seq = seq;
		batch[n].value = value;
		batch[n].t_raise = t_raise;
		batch[n].flags = 0;
		batch[n].reserved = 0;
		n++;
	}
	return n;
}

/* Storm throttle; guard held.  True: schedule the unthrottle work. */
static bool sensor_storm_check_locked(struct sensor_dev *sd)
{
	unsigned int limit = READ_ONCE(storm_limit);

	if (!limit || sd->throttled || sd->dead)
		return false;
	if (time_after(jiffies, sd->storm_start + HZ)) {
		sd->storm_start = jiffies;
		sd->storm_count = 0;
	}
	if (++sd->storm_count <= limit)
		return false;
	sd->throttled = true;
	sd->cnt.drv_throttles++;
	sensor_write_ctrl_locked(sd, 0);	/* IRQ_EN off */
	return true;
}

/*
 * Stage 1: acknowledge what the device has, queue it for stage 2.
 * @from_irq: count it as an interrupt (and for the storm throttle).
 * Returns the number of latched samples found (0: spurious).
 */
static unsigned int sensor_service(struct sensor_dev *sd, bool from_irq)
{
	struct irq_sensor_sample batch[IRQ_SENSOR_LATCH_MAX + 1];
	unsigned int i, n = 0, refused = 0, bad_values = 0, max;
	bool queue = false, throttle = false;
	unsigned long flags;
	u32 status;

	status = sensor_rd(sd, IRQ_SENSOR_REG_STATUS);
	if (status == ~0u)
		return 0;		/* device gone (reads as all ones) */
	/* W1C: a spurious or lost mark would hold INTx up */
	if (status & (IRQ_SENSOR_STATUS_SPURIOUS | IRQ_SENSOR_STATUS_LOST))
		sensor_wr(sd, IRQ_SENSOR_REG_STATUS, status &
			  (IRQ_SENSOR_STATUS_SPURIOUS | IRQ_SENSOR_STATUS_LOST));
	if (status & IRQ_SENSOR_STATUS_SAMPLE) {
		/* bounded: a storm may refill the latch while we drain it */
		max = min_t(u32, READ_ONCE(sd->latch_depth), IRQ_SENSOR_LATCH_MAX) + 1;
		n = sensor_take_samples(sd, batch, max, &refused, &bad_values);
	}

	flags = sensor_lock(sd);
	if (from_irq) {
		sd->cnt.drv_irqs++;
		if (!n && !refused)
			sd->cnt.drv_irq_none++;
		throttle = sensor_storm_check_locked(sd);
	}
	if (status & IRQ_SENSOR_STATUS_SPURIOUS)
		sd->cnt.drv_spurious++;
	sd->cnt.drv_samples += n;
	sd->cnt.drv_hard_refused += refused;
	sd->cnt.drv_bad_values += bad_values;
	for (i = 0; i < n; i++) {
		struct irq_sensor_sample *e;

		if (sd->fifo_head - sd->fifo_tail >= SENSOR_FIFO_SIZE) {
			sd->cnt.drv_fifo_overflow++;
			sd->fifo_lost = true;
			continue;
		}
		e = &sd->fifo[sd->fifo_head % SENSOR_FIFO_SIZE];
		*e = batch[i];
		if (sd->fifo_lost)
			e->flags |= IRQ_SENSOR_SAMPLE_F_RING_OVERFLOW;
		sd->fifo_lost = false;
		sd->fifo_head++;
		queue = true;
	}
	sensor_unlock(sd, flags);

	/* both take raw locks only: fine in hard interrupt context */
	if (queue)
		kthread_queue_work(sd->worker, &sd->work);
	if (throttle)
		schedule_delayed_work(&sd->unthrottle,
				      msecs_to_jiffies(SENSOR_UNTHROTTLE_MS));
	return n + refused;
}

#ifdef SENSOR_CAN_NODELAY
/* Test only (nodelay_violation): calls an IRQF_NODELAY handler must not make. */
static void sensor_violate(struct sensor_dev *sd)
{
	/*
	 * Only where the call cannot deadlock: the three locks are held
	 * with interrupts (soft-)disabled, so an interrupt that arrived
	 * inside a soft section may find one held by the code it
	 * interrupted, and the CPU would spin here for good (the handler
	 * sees the interrupted context's soft state).  The check names a
	 * NODELAY handler's use of a soft lock on every run, so this loses
	 * nothing; the call waits for the next interrupt instead.
	 */
	if (!sd->nodelay || soft_irqs_disabled() ||
	    !atomic_xchg(&sensor_nd_armed, 0))
		return;
	pr_info("nodelay_violation %u: the handler makes the call\n",
		READ_ONCE(nodelay_violation));
	switch (READ_ONCE(nodelay_violation)) {
	case SENSOR_VIOLATE_COMPLETE:
		complete(&sensor_nd_done);
		break;
	case SENSOR_VIOLATE_QUEUE_WORK:
		queue_work(system_wq, &sensor_nd_work);
		break;
	case SENSOR_VIOLATE_HRTIMER:
		hrtimer_start(&sensor_nd_timer, ms_to_ktime(1), HRTIMER_MODE_REL);
		break;
	}
}

static void sensor_nd_work_fn(struct work_struct *work)
{
}

static enum hrtimer_restart sensor_nd_timer_fn(struct hrtimer *t)
{
	return HRTIMER_NORESTART;
}
#else
static inline void sensor_violate(struct sensor_dev *sd) { }
#endif

static irqreturn_t sensor_irq(int irq, void *data)
{
	struct sensor_dev *sd = data;

	sensor_violate(sd);
	/* nothing latched: spurious (or another device on a shared INTx) */
	return sensor_service(sd, true) ? IRQ_HANDLED : IRQ_NONE;
}

/* Storm over: interrupts back on, and take what arrived meanwhile. */
static void sensor_unthrottle_fn(struct work_struct *work)
{
	struct sensor_dev *sd = container_of(to_delayed_work(work),
					     struct sensor_dev, unthrottle);
	unsigned long flags;
	bool dead;

	flags = sensor_lock(sd);
	dead = sd->dead;
	sensor_unlock(sd, flags);
	if (dead)
		return;

	disable_irq(sd->irq);		/* stage 1 must not run twice at once */
	flags = sensor_lock(sd);
	sd->throttled = false;
	sd->storm_start = jiffies;
	sd->storm_count = 0;
	sensor_write_ctrl_locked(sd, 0);
	sensor_unlock(sd, flags);
	/*
	 * MSI/MSI-X samples raised while IRQ_EN was off sent no message, and
	 * a storm only continues after a hard ack: drain the latch here.
	 */
	sensor_service(sd, false);
	enable_irq(sd->irq);
}

/* Stage 2: the worker thread */

static void sensor_ring_push_locked(struct sensor_dev *sd,
				    const struct irq_sensor_sample *e)
{
	struct irq_sensor_sample *r;

	if (sd->ring_head - sd->ring_tail > sd->ring_mask) {
		sd->cnt.drv_ring_overflow++;
		sd->ring_lost = true;
		return;
	}
	r = &sd->ring[sd->ring_head & sd->ring_mask];
	*r = *e;
	if (sd->ring_lost)
		r->flags |= IRQ_SENSOR_SAMPLE_F_RING_OVERFLOW;
	sd->ring_lost = false;
	sd->ring_head++;
}

static void sensor_work_fn(struct kthread_work *work)
{
	struct sensor_dev *sd = container_of(work, struct sensor_dev, work);
	struct irq_sensor_sample e;
	unsigned long flags;

	for (;;) {
		flags = sensor_lock(sd);
		if (sd->fifo_head == sd->fifo_tail) {
			sensor_unlock(sd, flags);
			break;
		}
		e = sd->fifo[sd->fifo_tail % SENSOR_FIFO_SIZE];
		sd->fifo_tail++;
		sensor_unlock(sd, flags);

		/* before the record is visible: USER must follow THREAD */
		sensor_wr(sd, IRQ_SENSOR_REG_ACK(IRQ_SENSOR_STAGE_THREAD), e.seq);

		flags = sensor_lock(sd);
		sd->cnt.drv_thread_acks++;
		sensor_ring_push_locked(sd, &e);
		sensor_unlock(sd, flags);

		/* outside the guard: the wait queue lock sleeps on RT */
		if (wq_has_sleeper(&sd->readq))
			wake_up_interruptible(&sd->readq);
	}
}

/* The irq-off hog: an old driver's long local_irq_disable() section */

/*
 * Busy-wait on ktime_get_ns(), not udelay(): loops_per_jiffy is
 * meaningless under TCG.
 */
static void sensor_hog_spin(u64 len_ns)
{
	u64 t0 = ktime_get_ns();

	while (ktime_get_ns() - t0 < len_ns)
		cpu_relax();
}

#ifdef IRQ_SENSOR_UNSAFE_SOFT_GUARD
/*
 * Test only: hold the lock the handler takes for the whole section.  With
 * a soft local_irq_disable() and an IRQF_NODELAY handler arriving on this
 * CPU, the handler spins on the lock and this section never resumes.
 */
static void sensor_hog_section(struct sensor_dev *sd, u64 len_ns)
{
	local_irq_disable();
	raw_spin_lock(&sd->lock);
	sensor_hog_spin(len_ns);
	sd->cnt.drv_hog_runs++;
	raw_spin_unlock(&sd->lock);
	local_irq_enable();
}
#else
#ifdef irq_line_lock_irqsave
/*
 * Test only, on kernels with irq chip line locks (RT_IRQ_DISABLE): the hog
 * holds a line lock instead, as a long IO-APIC register section would, so
 * that IO-APIC (INTx) interrupts on its CPU wait for it and MSI ones don't.
 */
static bool hog_line_lock;
module_param(hog_line_lock, bool, 0444);
MODULE_PARM_DESC(hog_line_lock, "irq-off hog: hold an irq line lock (test)");
static DEFINE_RAW_SPINLOCK(sensor_hog_line_lock);
#endif

static void sensor_hog_irqs_off(u64 len_ns)
{
#ifdef irq_line_lock_irqsave
	unsigned long flags;

	if (hog_line_lock) {
		irq_line_lock_irqsave(&sensor_hog_line_lock, flags);
		sensor_hog_spin(len_ns);
		irq_line_unlock_irqrestore(&sensor_hog_line_lock, flags);
		return;
	}
#endif
	local_irq_disable();
	sensor_hog_spin(len_ns);
	local_irq_enable();
}

/* The normal build never holds the driver lock inside the hog. */
static void sensor_hog_section(struct sensor_dev *sd, u64 len_ns)
{
	unsigned long flags;

	sensor_hog_irqs_off(len_ns);

	flags = sensor_lock(sd);
	sd->cnt.drv_hog_runs++;
	sensor_unlock(sd, flags);
}
#endif

static int sensor_hog_fn(void *data)
{
	struct sensor_dev *sd = data;
	u64 len_ns = (u64)sd->hog.length_us * NSEC_PER_USEC;
	ktime_t period = ns_to_ktime((u64)sd->hog.period_us * NSEC_PER_USEC);
	ktime_t next = ktime_get();

	sched_set_fifo_low(current);	/* on time even under CFS load */
	while (!kthread_should_stop()) {
		next = ktime_add(next, period);
		sensor_hog_section(sd, len_ns);

		set_current_state(TASK_INTERRUPTIBLE);
		if (!kthread_should_stop())
			schedule_hrtimeout(&next, HRTIMER_MODE_ABS);
		__set_current_state(TASK_RUNNING);
		if (ktime_before(next, ktime_get()))
			next = ktime_get();	/* overran: no catch-up burst */
	}
	return 0;
}

static int sensor_hog_check(const struct irq_sensor_hog *h)
{
	if (h->reserved)
		return -EINVAL;
	if (!h->length_us)
		return 0;
	if (h->length_us > SENSOR_HOG_MAX_US ||
	    h->period_us <= h->length_us || h->period_us > SENSOR_HOG_PERIOD_MAX_US)
		return -EINVAL;
	if (h->cpu < -1 || h->cpu >= (int)nr_cpu_ids)
		return -EINVAL;
	return 0;
}

/* Caller holds hog_mutex. */
static void sensor_hog_stop_locked(struct sensor_dev *sd)
{
	if (sd->hog_task) {
		kthread_stop(sd->hog_task);
		sd->hog_task = NULL;
	}
	sd->hog.length_us = 0;
}

/* Caller holds hog_mutex; @h was checked by sensor_hog_check(). */
static int sensor_hog_start_locked(struct sensor_dev *sd,
				   const struct irq_sensor_hog *h)
{
	struct task_struct *t;

	sensor_hog_stop_locked(sd);
	if (!h->length_us)
		return 0;
	if (h->cpu >= 0 && !cpu_online(h->cpu))
		return -EINVAL;
	sd->hog = *h;
	t = kthread_create(sensor_hog_fn, sd, "%s-hog", sd->name);
	if (IS_ERR(t)) {
		sd->hog.length_us = 0;
		return PTR_ERR(t);
	}
	if (h->cpu >= 0)
		kthread_bind(t, h->cpu);
	sd->hog_task = t;
	wake_up_process(t);
	return 0;
}

static int sensor_set_hog(struct sensor_dev *sd, const struct irq_sensor_hog *h)
{
	int ret = sensor_hog_check(h);

	if (ret)
		return ret;
	mutex_lock(&sd->hog_mutex);
	if (READ_ONCE(sd->dead))
		ret = -ENODEV;
	else
		ret = sensor_hog_start_locked(sd, h);
	mutex_unlock(&sd->hog_mutex);
	return ret;
}

/* Configuration and counters (sd->mutex held, device alive) */

static int sensor_config_check(struct sensor_dev *sd, const struct irq_sensor_config *c)
{
	if (c->mode > IRQ_SENSOR_MODE_MAX || c->run > 1 ||
	    c->period_ns < 1000 || !c->burst_count ||
	    !c->latch_depth || c->latch_depth > sd->latch_max ||
	    (c->faults & ~IRQ_SENSOR_FAULT_STUCK_INTX))
		return -EINVAL;
	return 0;
}

/* Program everything but CTRL. */
static void sensor_program(struct sensor_dev *sd, const struct irq_sensor_config *c)
{
	sensor_wr(sd, IRQ_SENSOR_REG_MODE, c->mode);
	sensor_wr64(sd, IRQ_SENSOR_REG_PERIOD, c->period_ns);
	sensor_wr64(sd, IRQ_SENSOR_REG_DEADLINE, c->deadline_ns);
	sensor_wr(sd, IRQ_SENSOR_REG_JITTER, c->jitter_ns);
	sensor_wr(sd, IRQ_SENSOR_REG_BURST_COUNT, c->burst_count);
	sensor_wr(sd, IRQ_SENSOR_REG_BURST_GAP, c->burst_gap_ns);
	sensor_wr(sd, IRQ_SENSOR_REG_SEED, c->seed);
	sensor_wr(sd, IRQ_SENSOR_REG_LATCH_DEPTH, c->latch_depth);
	sensor_wr(sd, IRQ_SENSOR_REG_SPURIOUS_EVERY, c->spurious_every);
	sensor_wr(sd, IRQ_SENSOR_REG_DROP_EVERY, c->drop_every);
	sensor_wr(sd, IRQ_SENSOR_REG_FAULTS, c->faults);
	WRITE_ONCE(sd->latch_depth, c->latch_depth);
}

static int sensor_set_config(struct sensor_dev *sd, const struct irq_sensor_config *c)
{
	int ret = sensor_config_check(sd, c);

	if (ret)
		return ret;
	/* stop first: every knob written to a running generator restarts it */
	sensor_set_ctrl(sd, IRQ_SENSOR_CTRL_RUN, 0, 0);
	sensor_program(sd, c);
	sd->cfg = *c;
	sd->cfg_valid = true;
	sd->keep_running = false;
	sensor_set_ctrl(sd, IRQ_SENSOR_CTRL_RUN, IRQ_SENSOR_CTRL_IRQ_EN |
			(c->run ? IRQ_SENSOR_CTRL_RUN : 0), 0);
	return 0;
}

static void sensor_get_config(struct sensor_dev *sd, struct irq_sensor_config *c)
{
	memset(c, 0, sizeof(*c));
	c->mode = sensor_rd(sd, IRQ_SENSOR_REG_MODE);
	c->run = !!(sensor_rd(sd, IRQ_SENSOR_REG_CTRL) & IRQ_SENSOR_CTRL_RUN);
	c->period_ns = sensor_rd64(sd, IRQ_SENSOR_REG_PERIOD);
	c->deadline_ns = sensor_rd64(sd, IRQ_SENSOR_REG_DEADLINE);
	c->jitter_ns = sensor_rd(sd, IRQ_SENSOR_REG_JITTER);
	c->burst_count = sensor_rd(sd, IRQ_SENSOR_REG_BURST_COUNT);
	c->burst_gap_ns = sensor_rd(sd, IRQ_SENSOR_REG_BURST_GAP);
	c->seed = sensor_rd(sd, IRQ_SENSOR_REG_SEED);
	c->latch_depth = sensor_rd(sd, IRQ_SENSOR_REG_LATCH_DEPTH);
	c->spurious_every = sensor_rd(sd, IRQ_SENSOR_REG_SPURIOUS_EVERY);
	c->drop_every = sensor_rd(sd, IRQ_SENSOR_REG_DROP_EVERY);
	c->faults = sensor_rd(sd, IRQ_SENSOR_REG_FAULTS);
	/* the host may change it through QOM: keep stage 1's bound right */
	WRITE_ONCE(sd->latch_depth, c->latch_depth);
}

static void sensor_get_counters(struct sensor_dev *sd, struct irq_sensor_counters *c)
{
	unsigned long flags = sensor_lock(sd);

	*c = sd->cnt;
	sensor_unlock(sd, flags);
	c->dev_samples = sensor_rd64(sd, IRQ_SENSOR_REG_CNT_SAMPLES);
	c->dev_irqs = sensor_rd64(sd, IRQ_SENSOR_REG_CNT_IRQS);
	c->dev_lost_deadline = sensor_rd64(sd, IRQ_SENSOR_REG_CNT_LOST_DEADLINE);
	c->dev_lost_overflow = sensor_rd64(sd, IRQ_SENSOR_REG_CNT_LOST_OVERFLOW);
	c->dev_spurious = sensor_rd64(sd, IRQ_SENSOR_REG_CNT_SPURIOUS);
	c->dev_dropped = sensor_rd64(sd, IRQ_SENSOR_REG_CNT_DROPPED);
	c->dev_bad_acks = sensor_rd64(sd, IRQ_SENSOR_REG_CNT_BAD_ACKS);
}

static void sensor_clear_stats(struct sensor_dev *sd)
{
	unsigned long flags = sensor_lock(sd);

	memset(&sd->cnt, 0, sizeof(sd->cnt));
	sensor_write_ctrl_locked(sd, IRQ_SENSOR_CTRL_CLEAR_STATS);
	sensor_unlock(sd, flags);
}

/* Forget queued samples (after a device reset their seqs mean nothing). */
static void sensor_flush_queues(struct sensor_dev *sd)
{
	unsigned long flags;

	mutex_lock(&sd->read_mutex);
	flags = sensor_lock(sd);
	sd->fifo_tail = sd->fifo_head;
	sd->fifo_lost = false;
	sd->ring_tail = sd->ring_head;
	sd->ring_lost = false;
	sensor_unlock(sd, flags);
	mutex_unlock(&sd->read_mutex);
}

/*
 * Stop stages 1 and 2 (and the unthrottle work, which runs stage 1):
 * with the line disabled nothing can queue the work again.  Undo with
 * enable_irq().
 */
static void sensor_quiesce(struct sensor_dev *sd)
{
	disable_irq(sd->irq);
	cancel_delayed_work_sync(&sd->unthrottle);
	kthread_flush_worker(sd->worker);
}

/*
 * CTRL.RESET: the device forgets everything (generator off, IRQ_EN off,
 * seq restarts at 1, counters zero), and so do the driver's counters.
 * Quiesce stages 1 and 2 around it, then turn interrupts back on.
 */
static void sensor_reset(struct sensor_dev *sd)
{
	unsigned long flags;

	sensor_quiesce(sd);
	flags = sensor_lock(sd);
	sensor_wr(sd, IRQ_SENSOR_REG_CTRL, IRQ_SENSOR_CTRL_RESET);
	memset(&sd->cnt, 0, sizeof(sd->cnt));	/* as the device's */
	sd->ctrl = IRQ_SENSOR_CTRL_IRQ_EN;
	sd->throttled = false;
	sd->storm_start = jiffies;
	sd->storm_count = 0;
	sensor_write_ctrl_locked(sd, 0);
	sensor_unlock(sd, flags);
	sensor_flush_queues(sd);
	sd->hard_stamp = sensor_rd64(sd, IRQ_SENSOR_REG_STAMP(IRQ_SENSOR_STAGE_HARD));
	WRITE_ONCE(sd->latch_depth, sensor_rd(sd, IRQ_SENSOR_REG_LATCH_DEPTH));
	sd->cfg_valid = false;
	sd->keep_running = false;
	enable_irq(sd->irq);
}

/* /dev/irq-sensorN */

static unsigned int sensor_ring_count(struct sensor_dev *sd)
{
	unsigned long flags = sensor_lock(sd);
	unsigned int n = sd->ring_head - sd->ring_tail;

	sensor_unlock(sd, flags);
	return n;
}

/*
 * Copy up to @max records: peek under the guard, copy_to_user() outside
 * it (it may fault and sleep), then commit.  read_mutex keeps readers from
 * interleaving, so a fault loses nothing.  Returns bytes, 0 or -EFAULT.
 */
static ssize_t sensor_read_records(struct sensor_dev *sd, char __user *buf, size_t max)
{
	struct irq_sensor_sample chunk[SENSOR_READ_CHUNK];
	size_t done = 0;

	while (done < max) {
		unsigned int i, n, tail;
		unsigned long flags;

		flags = sensor_lock(sd);
		tail = sd->ring_tail;
		n = min_t(size_t, sd->ring_head - tail, min_t(size_t, max - done,
							      SENSOR_READ_CHUNK));
		for (i = 0; i < n; i++)
			chunk[i] = sd->ring[(tail + i) & sd->ring_mask];
		sensor_unlock(sd, flags);
		if (!n)
			break;
		if (copy_to_user(buf + done * sizeof(chunk[0]), chunk, n * sizeof(chunk[0])))
			return done ? done * sizeof(chunk[0]) : -EFAULT;

		flags = sensor_lock(sd);
		sd->ring_tail = tail + n;
		sensor_unlock(sd, flags);
		done += n;
	}
	return done * sizeof(chunk[0]);
}

static ssize_t sensor_read(struct file *file, char __user *buf, size_t count,
			   loff_t *ppos)
{
	struct sensor_dev *sd = file->private_data;
	size_t max = count / sizeof(struct irq_sensor_sample);
	ssize_t ret;

	if (!max)
		return -EINVAL;
	for (;;) {
		if (mutex_lock_interruptible(&sd->read_mutex))
			return -ERESTARTSYS;
		ret = sensor_read_records(sd, buf, max);
		mutex_unlock(&sd->read_mutex);
		if (ret)
			return ret;
		if (READ_ONCE(sd->dead))
			return -ENODEV;
		if (file->f_flags & O_NONBLOCK)
			return -EAGAIN;
		ret = wait_event_interruptible(sd->readq, sensor_ring_count(sd) ||
					       READ_ONCE(sd->dead));
		if (ret)
			return ret;
	}
}

static __poll_t sensor_poll(struct file *file, poll_table *wait)
{
	struct sensor_dev *sd = file->private_data;
	__poll_t mask = 0;

	poll_wait(file, &sd->readq, wait);
	if (sensor_ring_count(sd))
		mask |= EPOLLIN | EPOLLRDNORM;
	if (READ_ONCE(sd->dead))
		mask |= EPOLLHUP | EPOLLERR;
	return mask;
}

static long sensor_ioctl_locked(struct sensor_dev *sd, unsigned int cmd,
				void __user *argp)
{
	struct irq_sensor_counters cnt;
	struct irq_sensor_config cfg;
	unsigned long flags;
	u32 val;

	switch (cmd) {
	case IRQ_SENSOR_IOC_SET_CONFIG:
		if (copy_from_user(&cfg, argp, sizeof(cfg)))
			return -EFAULT;
		return sensor_set_config(sd, &cfg);
	case IRQ_SENSOR_IOC_GET_CONFIG:
		sensor_get_config(sd, &cfg);
		return copy_to_user(argp, &cfg, sizeof(cfg)) ? -EFAULT : 0;
	case IRQ_SENSOR_IOC_GET_COUNTERS:
		sensor_get_counters(sd, &cnt);
		return copy_to_user(argp, &cnt, sizeof(cnt)) ? -EFAULT : 0;
	case IRQ_SENSOR_IOC_ACK_USER:
		if (get_user(val, (u32 __user *)argp))
			return -EFAULT;
		sensor_wr(sd, IRQ_SENSOR_REG_ACK(IRQ_SENSOR_STAGE_USER), val);
		flags = sensor_lock(sd);
		sd->cnt.drv_user_acks++;
		sensor_unlock(sd, flags);
		return 0;
	case IRQ_SENSOR_IOC_FIRE:
		sensor_set_ctrl(sd, 0, 0, IRQ_SENSOR_CTRL_FIRE);
		return 0;
	case IRQ_SENSOR_IOC_CLEAR_STATS:
		sensor_clear_stats(sd);
		return 0;
	case IRQ_SENSOR_IOC_RESET:
		sensor_reset(sd);
		return 0;
	case IRQ_SENSOR_IOC_KEEP_RUNNING:
		if (get_user(val, (u32 __user *)argp))
			return -EFAULT;
		if (val > 1)
			return -EINVAL;
		sd->keep_running = val;
		return 0;
	}
	return -ENOTTY;
}

static long sensor_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct sensor_dev *sd = file->private_data;
	void __user *argp = (void __user *)arg;
	struct irq_sensor_hog hog;
	long ret;

	if (cmd == IRQ_SENSOR_IOC_SET_HOG) {
		/* own mutex: stopping a hog waits out its section */
		if (copy_from_user(&hog, argp, sizeof(hog)))
			return -EFAULT;
		return sensor_set_hog(sd, &hog);
	}
	mutex_lock(&sd->mutex);
	if (sd->dead)
		ret = -ENODEV;
	else
		ret = sensor_ioctl_locked(sd, cmd, argp);
	mutex_unlock(&sd->mutex);
	return ret;
}

static void sensor_free(struct kref *kref)
{
	struct sensor_dev *sd = container_of(kref, struct sensor_dev, kref);

	ida_free(&sensor_ida, sd->id);
	kvfree(sd->ring);
	kfree(sd);
}

static int sensor_open(struct inode *inode, struct file *file)
{
	/* misc_open() set private_data; misc_deregister() waits for us */
	struct sensor_dev *sd = container_of(file->private_data,
					     struct sensor_dev, misc);

	mutex_lock(&sd->mutex);
	if (sd->dead) {
		mutex_unlock(&sd->mutex);
		return -ENODEV;
	}
	sd->openers++;
	kref_get(&sd->kref);
	mutex_unlock(&sd->mutex);
	file->private_data = sd;
	return stream_open(inode, file);
}

static int sensor_release(struct inode *inode, struct file *file)
{
	struct sensor_dev *sd = file->private_data;

	mutex_lock(&sd->mutex);
	/* the last opener stops the generator (unless asked to keep it) */
	if (!--sd->openers && !sd->dead && !sd->keep_running)
		sensor_set_ctrl(sd, IRQ_SENSOR_CTRL_RUN, 0, 0);
	mutex_unlock(&sd->mutex);
	kref_put(&sd->kref, sensor_free);
	return 0;
}

static const struct file_operations sensor_fops = {
	.owner = THIS_MODULE,
	.open = sensor_open,
	.release = sensor_release,
	.read = sensor_read,
	.poll = sensor_poll,
	.unlocked_ioctl = sensor_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

/* debugfs: <debugfs>/<module>/<pci name>/{counters,state} */

#define SENSOR_CNT(f) { #f, offsetof(struct irq_sensor_counters, f) }
static const struct {
	const char *name;
	size_t off;
} sensor_cnt_fields[] = {
	SENSOR_CNT(dev_samples), SENSOR_CNT(dev_irqs),
	SENSOR_CNT(dev_lost_deadline), SENSOR_CNT(dev_lost_overflow),
	SENSOR_CNT(dev_spurious), SENSOR_CNT(dev_dropped),
	SENSOR_CNT(dev_bad_acks), SENSOR_CNT(drv_irqs),
	SENSOR_CNT(drv_irq_none), SENSOR_CNT(drv_samples),
	SENSOR_CNT(drv_ring_overflow), SENSOR_CNT(drv_hog_runs),
	SENSOR_CNT(drv_throttles), SENSOR_CNT(drv_spurious),
	SENSOR_CNT(drv_bad_values), SENSOR_CNT(drv_hard_refused),
	SENSOR_CNT(drv_fifo_overflow), SENSOR_CNT(drv_thread_acks),
	SENSOR_CNT(drv_user_acks),
};

static_assert(ARRAY_SIZE(sensor_cnt_fields) * sizeof(__u64) ==
	      sizeof(struct irq_sensor_counters));

static int sensor_counters_show(struct seq_file *m, void *v)
{
	struct sensor_dev *sd = m->private;
	struct irq_sensor_counters c;
	unsigned int i;

	sensor_get_counters(sd, &c);
	for (i = 0; i < ARRAY_SIZE(sensor_cnt_fields); i++)
		seq_printf(m, "%s %llu\n", sensor_cnt_fields[i].name,
			   *(u64 *)((char *)&c + sensor_cnt_fields[i].off));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sensor_counters);

static int sensor_state_show(struct seq_file *m, void *v)
{
	struct sensor_dev *sd = m->private;
	unsigned int fifo, ring;
	unsigned long flags;
	bool throttled;
	u32 ctrl;

	flags = sensor_lock(sd);
	fifo = sd->fifo_head - sd->fifo_tail;
	ring = sd->ring_head - sd->ring_tail;
	throttled = sd->throttled;
	ctrl = sd->ctrl;
	sensor_unlock(sd, flags);
	seq_printf(m, "device %s\nirq %d\nirq_type %s\nnodelay %d\nguard %s\n",
		   sd->name, sd->irq, sd->irq_type, sd->nodelay,
		   sensor_guard_name(sd));
	seq_printf(m, "ctrl 0x%x\nthrottled %d\nfifo %u/%u\nring %u/%u\nlatch_depth %u\n",
		   ctrl, throttled, fifo, SENSOR_FIFO_SIZE, ring,
		   sd->ring_mask + 1, READ_ONCE(sd->latch_depth));
	mutex_lock(&sd->hog_mutex);
	seq_printf(m, "hog_us %u\nhog_period_us %u\nhog_cpu %d\n",
		   sd->hog.length_us, sd->hog.period_us, sd->hog.cpu);
	mutex_unlock(&sd->hog_mutex);
	seq_printf(m, "shared %d\nreqfree_cycles %ld\n", sd->shared,
		   atomic_long_read(&sd->reqfree_cycles));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sensor_state);

/* The action debugfs reqfree adds and removes: never the device's. */
static irqreturn_t sensor_extra_irq(int irq, void *data)
{
	return IRQ_NONE;
}

/*
 * debugfs reqfree: write N to request and free a second, shared action on
 * the device's interrupt N times, while it may be flooding - free_irq()
 * against interrupts in flight.  With nodelay the action alternates
 * between IRQF_NODELAY and IRQF_NO_THREAD (which a soft section must log),
 * so whether the interrupt may run inside soft sections flips each cycle.
 * Needs shared_irq=1.
 */
static ssize_t sensor_reqfree_write(struct file *file, const char __user *buf,
				    size_t len, loff_t *ppos)
{
	struct sensor_dev *sd = file->private_data;
	unsigned int i, n;
	int ret;

	ret = kstrtouint_from_user(buf, len, 0, &n);
	if (ret)
		return ret;
	if (!sd->shared)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		unsigned long irqf = IRQF_SHARED;

		if (sd->nodelay)
			irqf |= (i & 1) ? IRQF_NO_THREAD : SENSOR_IRQF_NODELAY;
		ret = request_irq(sd->irq, sensor_extra_irq, irqf,
				  "irq-sensor-extra", &sd->extra);
		if (ret)
			return ret;
		free_irq(sd->irq, &sd->extra);
		atomic_long_inc(&sd->reqfree_cycles);
		if (signal_pending(current))
			return -EINTR;
		cond_resched();
	}
	return len;
}

/*
 * debugfs irqbench: the cost of the interrupt-disabling primitives, for
 * QEMU -icount (1 instruction = 2^shift ns of guest time).  Each figure is
 * the best of IRQBENCH_RUNS runs of IRQBENCH_PAIRS pairs, minus the same
 * loop empty, in ns per pair: a run that took an interrupt loses.
 */
#define IRQBENCH_RUNS	20
#define IRQBENCH_PAIRS	4096

static DEFINE_RAW_SPINLOCK(sensor_bench_lock);

enum { BENCH_EMPTY, BENCH_SAVE, BENCH_DISABLE, BENCH_RAW_LOCK, BENCH_N };

static u64 sensor_bench_run(int what)
{
	unsigned long flags;
	u64 t0;
	int i;

	t0 = ktime_get_ns();
	for (i = 0; i < IRQBENCH_PAIRS; i++) {
		switch (what) {
		case BENCH_EMPTY:
			barrier();
			break;
		case BENCH_SAVE:
			local_irq_save(flags);
			local_irq_restore(flags);
			break;
		case BENCH_DISABLE:
			local_irq_disable();
			local_irq_enable();
			break;
		case BENCH_RAW_LOCK:
			raw_spin_lock_irqsave(&sensor_bench_lock, flags);
			raw_spin_unlock_irqrestore(&sensor_bench_lock, flags);
			break;
		}
	}
	return ktime_get_ns() - t0;
}

static int sensor_irqbench_show(struct seq_file *m, void *v)
{
	static const char * const names[BENCH_N] = {
		"empty", "local_irq_save_restore", "local_irq_disable_enable",
		"raw_spin_lock_irqsave_unlock",
	};
	u64 best[BENCH_N];
	int r, w;

	for (w = 0; w < BENCH_N; w++)
		best[w] = U64_MAX;
	preempt_disable();
	for (r = 0; r < IRQBENCH_RUNS; r++) {
		for (w = 0; w < BENCH_N; w++)
			best[w] = min(best[w], sensor_bench_run(w));
	}
	preempt_enable();
	seq_printf(m, "pairs %d\nruns %d\n", IRQBENCH_PAIRS, IRQBENCH_RUNS);
	for (w = 0; w < BENCH_N; w++)
		seq_printf(m, "%s_ns %llu\n", names[w], best[w]);
	for (w = 1; w < BENCH_N; w++)
		seq_printf(m, "%s_per_pair_ns_x100 %llu\n", names[w],
			   (best[w] - min(best[w], best[BENCH_EMPTY])) * 100 /
			   IRQBENCH_PAIRS);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sensor_irqbench);

static const struct file_operations sensor_reqfree_fops = {
	.owner	= THIS_MODULE,
	.open	= simple_open,
	.write	= sensor_reqfree_write,
	.llseek	= noop_llseek,
};

/* PCI */

static int sensor_setup_irq(struct sensor_dev *sd)
{
	static const struct {
		unsigned int type;
		const char *name;
	} types[] = {
		{ PCI_IRQ_MSIX, "msix" },
		{ PCI_IRQ_MSI, "msi" },
		{ SENSOR_PCI_IRQ_INTX, "intx" },
	};
	struct pci_dev *pdev = sd->pdev;
	int i, ret = -ENODEV;

	for (i = 0; i < ARRAY_SIZE(types); i++) {
		unsigned long irqf = nodelay ? SENSOR_IRQF_NODELAY : 0;

		if (!(sensor_irq_mask & types[i].type))
			continue;
		ret = pci_alloc_irq_vectors(pdev, 1, 1, types[i].type);
		if (ret < 0)
			continue;
		if (types[i].type == SENSOR_PCI_IRQ_INTX || shared_irq)
			irqf |= IRQF_SHARED;
		sd->shared = irqf & IRQF_SHARED;
		sd->irq = pci_irq_vector(pdev, 0);
		ret = request_irq(sd->irq, sensor_irq, irqf, sd->name, sd);
		if (!ret) {
			sd->irq_type = types[i].name;
			return 0;
		}
		dev_warn(&pdev->dev, "%s: request_irq(%d) failed: %d\n",
			 types[i].name, sd->irq, ret);
		pci_free_irq_vectors(pdev);
	}
	dev_err(&pdev->dev, "no usable interrupt (irq_types=%s): %d\n",
		irq_types, ret);
	return ret < 0 ? ret : -ENODEV;
}

static int sensor_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct irq_sensor_hog hog = {
		.length_us = hog_us, .period_us = hog_period_us, .cpu = hog_cpu,
	};
	struct sensor_dev *sd;
	unsigned long flags;
	u32 magic, version, caps;
	int ret;

	sd = kzalloc(sizeof(*sd), GFP_KERNEL);
	if (!sd)
		return -ENOMEM;
	kref_init(&sd->kref);
	raw_spin_lock_init(&sd->lock);
	mutex_init(&sd->mutex);
	mutex_init(&sd->read_mutex);
	mutex_init(&sd->hog_mutex);
	init_waitqueue_head(&sd->readq);
	kthread_init_work(&sd->work, sensor_work_fn);
	INIT_DELAYED_WORK(&sd->unthrottle, sensor_unthrottle_fn);
	sd->pdev = pdev;
	sd->nodelay = nodelay;
	sd->ring_mask = ring_size - 1;
	sd->storm_start = jiffies;
	sd->hog.cpu = -1;

	sd->id = ida_alloc(&sensor_ida, GFP_KERNEL);
	if (sd->id < 0) {
		ret = sd->id;
		kfree(sd);
		return ret;
	}
	snprintf(sd->name, sizeof(sd->name), "irq-sensor%d", sd->id);
	sd->ring = kvcalloc(ring_size, sizeof(*sd->ring), GFP_KERNEL);
	if (!sd->ring) {
		ret = -ENOMEM;
		goto err_free;
	}

	ret = pci_enable_device(pdev);
	if (ret)
		goto err_free;
	ret = pci_request_regions(pdev, KBUILD_MODNAME);
	if (ret)
		goto err_disable;
	ret = -ENODEV;
	if (!(pci_resource_flags(pdev, 0) & IORESOURCE_MEM) ||
	    pci_resource_len(pdev, 0) < IRQ_SENSOR_MMIO_SIZE)
		goto err_regions;
	sd->regs = pci_ioremap_bar(pdev, 0);
	if (!sd->regs)
		goto err_regions;
	pci_set_master(pdev);

	magic = sensor_rd(sd, IRQ_SENSOR_REG_ID);
	version = sensor_rd(sd, IRQ_SENSOR_REG_VERSION);
	if (magic != IRQ_SENSOR_ID_MAGIC ||
	    (version >> 16) != (IRQ_SENSOR_VERSION >> 16)) {
		dev_err(&pdev->dev, "not an irq-sensor v%u (id 0x%08x version 0x%08x)\n",
			IRQ_SENSOR_VERSION >> 16, magic, version);
		goto err_unmap;
	}
	caps = sensor_rd(sd, IRQ_SENSOR_REG_CAPS);
	sd->latch_max = (caps & IRQ_SENSOR_CAP_LATCH_MAX_MASK) >>
			IRQ_SENSOR_CAP_LATCH_MAX_SHIFT;
	if (!sd->latch_max || sd->latch_max > IRQ_SENSOR_LATCH_MAX)
		sd->latch_max = IRQ_SENSOR_LATCH_MAX;

	/* quiet until we are ready; keep whatever the host configured */
	sensor_wr(sd, IRQ_SENSOR_REG_CTRL, 0);
	sensor_wr(sd, IRQ_SENSOR_REG_STATUS,
		  IRQ_SENSOR_STATUS_SPURIOUS | IRQ_SENSOR_STATUS_LOST);
	sd->latch_depth = sensor_rd(sd, IRQ_SENSOR_REG_LATCH_DEPTH);
	sd->hard_stamp = sensor_rd64(sd, IRQ_SENSOR_REG_STAMP(IRQ_SENSOR_STAGE_HARD));

	sd->worker = kthread_create_worker(0, "%s-s2", sd->name);
	if (IS_ERR(sd->worker)) {
		ret = PTR_ERR(sd->worker);
		goto err_unmap;
	}
	sched_set_fifo(sd->worker->task);

	ret = sensor_setup_irq(sd);
	if (ret)
		goto err_worker;
	pci_set_drvdata(pdev, sd);

	flags = sensor_lock(sd);
	sd->ctrl = IRQ_SENSOR_CTRL_IRQ_EN;
	sensor_write_ctrl_locked(sd, 0);
	sensor_unlock(sd, flags);

	sd->misc.minor = MISC_DYNAMIC_MINOR;
	sd->misc.name = sd->name;
	sd->misc.fops = &sensor_fops;
	sd->misc.parent = &pdev->dev;
	sd->misc.mode = 0600;
	ret = misc_register(&sd->misc);
	if (ret)
		goto err_irq;

	sd->dbg = debugfs_create_dir(pci_name(pdev), sensor_dbg_root);
	debugfs_create_file("counters", 0444, sd->dbg, sd, &sensor_counters_fops);
	debugfs_create_file("state", 0444, sd->dbg, sd, &sensor_state_fops);
	debugfs_create_file("reqfree", 0200, sd->dbg, sd, &sensor_reqfree_fops);
	debugfs_create_file("irqbench", 0444, sd->dbg, sd, &sensor_irqbench_fops);

	mutex_lock(&sd->hog_mutex);
	ret = sensor_hog_start_locked(sd, &hog);
	mutex_unlock(&sd->hog_mutex);
	if (ret)
		dev_warn(&pdev->dev, "hog not started: %d\n", ret);

	dev_info(&pdev->dev, "/dev/%s: %s irq %d%s, guard %s, ring %u\n",
		 sd->name, sd->irq_type, sd->irq,
		 sd->nodelay ? " (IRQF_NODELAY)" : "", sensor_guard_name(sd),
		 ring_size);
	return 0;

err_irq:
	sensor_wr(sd, IRQ_SENSOR_REG_CTRL, 0);
	free_irq(sd->irq, sd);
	pci_free_irq_vectors(pdev);
err_worker:
	kthread_destroy_worker(sd->worker);
err_unmap:
	iounmap(sd->regs);
err_regions:
	pci_release_regions(pdev);
err_disable:
	pci_disable_device(pdev);
err_free:
	kref_put(&sd->kref, sensor_free);
	return ret;
}

static void sensor_remove(struct pci_dev *pdev)
{
	struct sensor_dev *sd = pci_get_drvdata(pdev);
	unsigned long flags;

	misc_deregister(&sd->misc);		/* no new opens */
	debugfs_remove_recursive(sd->dbg);	/* waits for readers */

	mutex_lock(&sd->mutex);
	flags = sensor_lock(sd);
	sd->dead = true;			/* no new unthrottle, no ioctls */
	sd->ctrl = 0;
	sensor_wr(sd, IRQ_SENSOR_REG_CTRL, 0);	/* generator and IRQ_EN off */
	sensor_unlock(sd, flags);
	mutex_unlock(&sd->mutex);

	mutex_lock(&sd->hog_mutex);
	sensor_hog_stop_locked(sd);
	mutex_unlock(&sd->hog_mutex);

	/* a handler that saw !dead may still queue the unthrottle work */
	synchronize_irq(sd->irq);
	cancel_delayed_work_sync(&sd->unthrottle);
	free_irq(sd->irq, sd);
	kthread_destroy_worker(sd->worker);	/* flushes stage 2 */
	pci_free_irq_vectors(pdev);
	wake_up_interruptible(&sd->readq);	/* readers see -ENODEV */

	iounmap(sd->regs);
	pci_release_regions(pdev);
	pci_disable_device(pdev);
	kref_put(&sd->kref, sensor_free);
}

/* PCI function reset (sysfs "reset"): the device loses its registers. */
static void sensor_reset_prepare(struct pci_dev *pdev)
{
	struct sensor_dev *sd = pci_get_drvdata(pdev);

	sensor_quiesce(sd);
}

static void sensor_reset_done(struct pci_dev *pdev)
{
	struct sensor_dev *sd = pci_get_drvdata(pdev);
	unsigned long flags;

	mutex_lock(&sd->mutex);
	if (sd->cfg_valid)
		sensor_program(sd, &sd->cfg);
	else
		WRITE_ONCE(sd->latch_depth, sensor_rd(sd, IRQ_SENSOR_REG_LATCH_DEPTH));
	sensor_flush_queues(sd);
	sd->hard_stamp = sensor_rd64(sd, IRQ_SENSOR_REG_STAMP(IRQ_SENSOR_STAGE_HARD));
	flags = sensor_lock(sd);
	sd->throttled = false;
	sensor_write_ctrl_locked(sd, 0);
	sensor_unlock(sd, flags);
	mutex_unlock(&sd->mutex);
	enable_irq(sd->irq);
}

static const struct pci_error_handlers sensor_err_handlers = {
	.reset_prepare = sensor_reset_prepare,
	.reset_done = sensor_reset_done,
};

static const struct pci_device_id sensor_ids[] = {
	{ PCI_DEVICE(IRQ_SENSOR_VENDOR_ID, IRQ_SENSOR_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, sensor_ids);

static struct pci_driver sensor_driver = {
	.name = KBUILD_MODNAME,
	.id_table = sensor_ids,
	.probe = sensor_probe,
	.remove = sensor_remove,
	.err_handler = &sensor_err_handlers,
};

/* Module */

static int sensor_parse_irq_types(const char *s)
{
	static const struct {
		const char *name;
		unsigned int type;
	} names[] = {
		{ "msix", PCI_IRQ_MSIX }, { "msi", PCI_IRQ_MSI },
		{ "intx", SENSOR_PCI_IRQ_INTX }, { "legacy", SENSOR_PCI_IRQ_INTX },
		{ "all", PCI_IRQ_MSIX | PCI_IRQ_MSI | SENSOR_PCI_IRQ_INTX },
	};
	unsigned int mask = 0;

	while (s && *s) {
		size_t len = strcspn(s, ",");
		int i;

		for (i = 0; len && i < ARRAY_SIZE(names); i++) {
			if (len == strlen(names[i].name) &&
			    !strncmp(s, names[i].name, len))
				break;
		}
		if (len && i == ARRAY_SIZE(names)) {
			pr_err("irq_types: unknown type '%.*s' (use msix, msi, intx)\n",
			       (int)len, s);
			return -EINVAL;
		}
		if (len)
			mask |= names[i].type;
		s += len;
		if (*s)
			s++;
	}
	if (!mask) {
		pr_err("irq_types: no interrupt type given\n");
		return -EINVAL;
	}
	sensor_irq_mask = mask;
	return 0;
}

static int __init sensor_init(void)
{
	struct irq_sensor_hog hog = {
		.length_us = hog_us, .period_us = hog_period_us, .cpu = hog_cpu,
	};
	int ret;

#ifndef SENSOR_CAN_NODELAY
	if (nodelay) {
		pr_err("nodelay=1 needs a kernel with IRQF_NODELAY and hard_local_irq_save() (CONFIG_RT_IRQ_DISABLE); this one has not\n");
		return -EINVAL;
	}
#endif
	ret = sensor_parse_irq_types(irq_types);
	if (ret)
		return ret;
	if (sensor_hog_check(&hog)) {
		pr_err("bad hog: hog_us <= %u, hog_period_us > hog_us and <= %u, hog_cpu -1..%u\n",
		       SENSOR_HOG_MAX_US, SENSOR_HOG_PERIOD_MAX_US, nr_cpu_ids - 1);
		return -EINVAL;
	}
	ring_size = roundup_pow_of_two(clamp(ring_size, 16U, 1U << 20));
#ifdef IRQ_SENSOR_UNSAFE_SOFT_GUARD
	pr_warn("TEST-ONLY build: soft guard even with nodelay; expect lockdep reports or a hang\n");
#endif

#ifdef SENSOR_CAN_NODELAY
	INIT_WORK(&sensor_nd_work, sensor_nd_work_fn);
	hrtimer_init(&sensor_nd_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	sensor_nd_timer.function = sensor_nd_timer_fn;
#endif
	sensor_dbg_root = debugfs_create_dir(KBUILD_MODNAME, NULL);
	ret = pci_register_driver(&sensor_driver);
	if (ret)
		debugfs_remove_recursive(sensor_dbg_root);
	return ret;
}

static void __exit sensor_exit(void)
{
	pci_unregister_driver(&sensor_driver);
#ifdef SENSOR_CAN_NODELAY
	cancel_work_sync(&sensor_nd_work);
	hrtimer_cancel(&sensor_nd_timer);
#endif
	debugfs_remove_recursive(sensor_dbg_root);
	ida_destroy(&sensor_ida);
}

module_init(sensor_init);
module_exit(sensor_exit);

MODULE_DESCRIPTION("irqrig irq-sensor driver (old-style local_irq_save() locking)");
MODULE_AUTHOR("irqrig");
MODULE_LICENSE("GPL");
