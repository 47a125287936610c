/* SPDX-License-Identifier: GPL-2.0-or-later OR MIT */
/*
 * irq-sensor register map: the single source of truth shared by the QEMU
 * device (qemu-device/), the guest driver and the guest tools
 * (guest-driver/) and the runner (irqrig/, which parses this file).
 *
 * BAR0 is a 4 KiB MMIO window.  Registers are little-endian.  32-bit
 * registers take 4-byte accesses; 64-bit registers (suffix _64 in the
 * comment) are 8-byte aligned and take one 8-byte access or two 4-byte
 * accesses (low word first).  Times are QEMU_CLOCK_VIRTUAL nanoseconds.
 * MSI-X table and PBA live in their own BAR (BAR1).
 *
 * Only macros here, so that QEMU, the kernel and user space can all include
 * it without type clashes.
 */
#ifndef IRQ_SENSOR_REGS_H
#define IRQ_SENSOR_REGS_H

#define IRQ_SENSOR_VENDOR_ID		0x1b36	/* Red Hat, QEMU's test range */
#define IRQ_SENSOR_DEVICE_ID		0x10f0
#define IRQ_SENSOR_REVISION		0x01

#define IRQ_SENSOR_MMIO_SIZE		0x1000
#define IRQ_SENSOR_MSIX_BAR		1
#define IRQ_SENSOR_MSIX_VECTORS		1

/* Identification */
#define IRQ_SENSOR_REG_ID		0x000	/* ro: IRQ_SENSOR_ID_MAGIC */
#define IRQ_SENSOR_ID_MAGIC		0x49525153	/* "IRQS" */
#define IRQ_SENSOR_REG_VERSION		0x004	/* ro: major << 16 | minor */
#define IRQ_SENSOR_VERSION		0x00010000
#define IRQ_SENSOR_REG_CAPS		0x008	/* ro: IRQ_SENSOR_CAP_* */
#define IRQ_SENSOR_CAP_MSIX		(1u << 0)
#define IRQ_SENSOR_CAP_MSI		(1u << 1)
#define IRQ_SENSOR_CAP_INTX		(1u << 2)
#define IRQ_SENSOR_CAP_LATCH_MAX_SHIFT	16	/* bits 16..23: max latch depth */
#define IRQ_SENSOR_CAP_LATCH_MAX_MASK	(0xffu << IRQ_SENSOR_CAP_LATCH_MAX_SHIFT)

/* Control */
#define IRQ_SENSOR_REG_CTRL		0x00c
#define IRQ_SENSOR_CTRL_RUN		(1u << 0)	/* rw: generator runs */
#define IRQ_SENSOR_CTRL_IRQ_EN		(1u << 1)	/* rw: raise interrupts */
#define IRQ_SENSOR_CTRL_FIRE		(1u << 8)	/* wo: one sample now */
#define IRQ_SENSOR_CTRL_CLEAR_STATS	(1u << 9)	/* wo: zero counters */
#define IRQ_SENSOR_CTRL_RESET		(1u << 31)	/* wo: device reset */
#define IRQ_SENSOR_CTRL_RW_MASK	(IRQ_SENSOR_CTRL_RUN | IRQ_SENSOR_CTRL_IRQ_EN)

/* Generator pattern */
#define IRQ_SENSOR_REG_MODE		0x010
#define IRQ_SENSOR_MODE_MANUAL		0	/* only FIRE raises samples */
#define IRQ_SENSOR_MODE_PERIODIC	1	/* every PERIOD (+- JITTER) */
#define IRQ_SENSOR_MODE_POISSON		2	/* exponential gaps, mean PERIOD */
#define IRQ_SENSOR_MODE_BURST		3	/* BURST_COUNT samples BURST_GAP
						 * apart, every PERIOD
						 */
#define IRQ_SENSOR_MODE_STORM		4	/* next sample BURST_GAP after
						 * each hard ack (back-to-back)
						 */
#define IRQ_SENSOR_MODE_MAX		IRQ_SENSOR_MODE_STORM

#define IRQ_SENSOR_REG_PERIOD		0x018	/* rw _64: ns, >= 1000 */
#define IRQ_SENSOR_REG_JITTER		0x020	/* rw: +- ns around PERIOD */
#define IRQ_SENSOR_REG_BURST_COUNT	0x024	/* rw: samples per burst */
#define IRQ_SENSOR_REG_BURST_GAP	0x028	/* rw: ns between burst samples */
#define IRQ_SENSOR_REG_SEED		0x02c	/* rw: PRNG seed (Poisson, jitter) */
#define IRQ_SENSOR_REG_DEADLINE		0x030	/* rw _64: ns, 0 = none */
#define IRQ_SENSOR_REG_LATCH_DEPTH	0x038	/* rw: 1..IRQ_SENSOR_LATCH_MAX */
#define IRQ_SENSOR_LATCH_MAX		16

/* Faults, orthogonal to the pattern */
#define IRQ_SENSOR_REG_FAULTS		0x03c
#define IRQ_SENSOR_FAULT_STUCK_INTX	(1u << 0)	/* INTx held asserted */
#define IRQ_SENSOR_REG_SPURIOUS_EVERY	0x040	/* rw: every Nth event is an
						 * interrupt without a sample;
						 * 0 = never
						 */
#define IRQ_SENSOR_REG_DROP_EVERY	0x044	/* rw: every Nth sample raises
						 * no interrupt; 0 = never
						 */

/* Status and the latch head */
#define IRQ_SENSOR_REG_STATUS		0x048	/* ro; write 1s to clear */
#define IRQ_SENSOR_STATUS_SAMPLE	(1u << 0)	/* latch not empty */
#define IRQ_SENSOR_STATUS_SPURIOUS	(1u << 1)	/* spurious raised */
#define IRQ_SENSOR_STATUS_LOST		(1u << 2)	/* a sample was lost */
#define IRQ_SENSOR_REG_LATCH_COUNT	0x04c	/* ro: samples in the latch */
#define IRQ_SENSOR_REG_NOW		0x050	/* ro _64: virtual clock, ns */
#define IRQ_SENSOR_REG_SAMPLE_SEQ	0x058	/* ro: head sequence, 0 = none */
#define IRQ_SENSOR_REG_SAMPLE_VALUE	0x05c	/* ro: head value */
#define IRQ_SENSOR_REG_SAMPLE_T_RAISE	0x060	/* ro _64: head raise time */

/*
 * Stage acknowledgements: write a sample's sequence number.  A hard ack of
 * the latch head consumes it.  The device stamps each write; stamps of the
 * last good ack per stage are readable.
 */
#define IRQ_SENSOR_STAGE_HARD		0
#define IRQ_SENSOR_STAGE_THREAD		1
#define IRQ_SENSOR_STAGE_USER		2
#define IRQ_SENSOR_NR_STAGES		3
#define IRQ_SENSOR_REG_ACK(stage)	(0x068 + 4 * (stage))	/* wo */
#define IRQ_SENSOR_REG_STAMP(stage)	(0x078 + 8 * (stage))	/* ro _64 */

/* Counters, ro _64, zeroed by CTRL_CLEAR_STATS and reset */
#define IRQ_SENSOR_REG_CNT_SAMPLES	0x100	/* samples produced */
#define IRQ_SENSOR_REG_CNT_IRQS		0x108	/* interrupts raised */
#define IRQ_SENSOR_REG_CNT_LOST_DEADLINE 0x110	/* expired in the latch */
#define IRQ_SENSOR_REG_CNT_LOST_OVERFLOW 0x118	/* pushed out of the latch */
#define IRQ_SENSOR_REG_CNT_SPURIOUS	0x120	/* interrupts without sample */
#define IRQ_SENSOR_REG_CNT_DROPPED	0x128	/* samples without interrupt */
#define IRQ_SENSOR_REG_CNT_BAD_ACKS	0x130	/* acks with a wrong sequence */
#define IRQ_SENSOR_REG_CNT_HOST_LATE	0x138	/* events the host ran too
						 * late to raise
						 */
#define IRQ_SENSOR_REG_CNT_STALE_ACKS	0x140	/* acks of samples older
						 * than the device's record
						 */
#define IRQ_SENSOR_REG_CNT_THROTTLED	0x148	/* generator held back: too
						 * many events at one instant
						 */

/*
 * The generator raises at most IRQ_SENSOR_INSTANT_MAX events at one
 * virtual-clock instant (zero-gap bursts and storms); the next one then
 * waits IRQ_SENSOR_THROTTLE_NS, so the guest always gets to run.
 */
#define IRQ_SENSOR_INSTANT_MAX		256
#define IRQ_SENSOR_THROTTLE_NS		1000
/* Default cap of the event log (QOM log-max-bytes; 0: none) */
#define IRQ_SENSOR_LOG_MAX_BYTES	(1ULL << 30)

/*
 * Per-stage latency (ack stamp - t_raise): a block per stage at
 * IRQ_SENSOR_REG_STATS(stage).  COUNT/MIN/MAX/SUM are _64; HIST is 32
 * 32-bit buckets, bucket i counts latencies in [2^i, 2^(i+1)) ns (bucket 0
 * also takes 0 ns, bucket 31 everything above).
 */
#define IRQ_SENSOR_REG_STATS(stage)	(0x200 + 0x100 * (stage))
#define IRQ_SENSOR_STATS_COUNT		0x00
#define IRQ_SENSOR_STATS_MIN		0x08
#define IRQ_SENSOR_STATS_MAX		0x10
#define IRQ_SENSOR_STATS_SUM		0x18
#define IRQ_SENSOR_STATS_HIST		0x80
#define IRQ_SENSOR_HIST_BUCKETS		32

/*
 * The value a sample carries is a fixed function of its sequence number, so
 * a reader can check that what it got is what the device produced.
 */
#define IRQ_SENSOR_SAMPLE_VALUE(seq)	((unsigned int)(seq) * 2654435761u)

#endif /* IRQ_SENSOR_REGS_H */
