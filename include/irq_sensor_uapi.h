/* SPDX-License-Identifier: GPL-2.0-or-later WITH Linux-syscall-note */
/*
 * /dev/irq-sensorN interface of irq_sensor.ko, shared by the driver and the
 * guest tools.  Device registers are in irq_sensor_regs.h.
 */
#ifndef IRQ_SENSOR_UAPI_H
#define IRQ_SENSOR_UAPI_H

#include <linux/types.h>
#include <linux/ioctl.h>

/* One record per read(2) slot. */
struct irq_sensor_sample {
	__u32 seq;		/* device sequence number, contiguous from 1 */
	__u32 value;		/* IRQ_SENSOR_SAMPLE_VALUE(seq) when intact */
	__u64 t_raise;		/* device virtual time of the raise, ns */
	__u32 flags;		/* IRQ_SENSOR_SAMPLE_F_* */
	__u32 reserved;
};

#define IRQ_SENSOR_SAMPLE_F_RING_OVERFLOW	(1u << 0) /* records were lost
							   * before this one
							   */

/* Generator configuration (IRQ_SENSOR_IOC_SET_CONFIG / GET_CONFIG). */
struct irq_sensor_config {
	__u32 mode;		/* IRQ_SENSOR_MODE_* */
	__u32 run;		/* 1: generator on */
	__u64 period_ns;
	__u64 deadline_ns;	/* 0: none */
	__u32 jitter_ns;
	__u32 burst_count;
	__u32 burst_gap_ns;
	__u32 seed;
	__u32 latch_depth;
	__u32 spurious_every;
	__u32 drop_every;
	__u32 faults;		/* IRQ_SENSOR_FAULT_* */
};

/* Counters of the device (read over MMIO) and of the driver. */
struct irq_sensor_counters {
	__u64 dev_samples;
	__u64 dev_irqs;
	__u64 dev_lost_deadline;
	__u64 dev_lost_overflow;
	__u64 dev_spurious;
	__u64 dev_dropped;
	__u64 dev_bad_acks;
	__u64 drv_irqs;		/* handler invocations */
	__u64 drv_irq_none;	/* invocations that found nothing (IRQ_NONE) */
	__u64 drv_samples;	/* samples taken from the device */
	__u64 drv_ring_overflow;	/* samples dropped: ring full */
	__u64 drv_hog_runs;	/* irq-off hog sections executed */
	/* Appended after the first version; keep new fields at the end. */
	__u64 drv_throttles;	/* storm throttles (CTRL.IRQ_EN off for 10 ms) */
	__u64 drv_spurious;	/* invocations that saw STATUS.SPURIOUS */
	__u64 drv_bad_values;	/* samples whose value != SAMPLE_VALUE(seq) */
	__u64 drv_hard_refused;	/* hard acks the device refused (the head
				 * expired between read and ack)
				 */
	__u64 drv_fifo_overflow;	/* samples dropped: stage-2 FIFO full */
	__u64 drv_thread_acks;	/* stage-2 acks written by the worker */
	__u64 drv_user_acks;	/* stage-3 acks written for ACK_USER */
};

/* The irq-off hog: an old driver's long local_irq_disable() section. */
struct irq_sensor_hog {
	__u32 length_us;	/* 0: off */
	__u32 period_us;	/* one section every period_us */
	__s32 cpu;		/* -1: any */
	__u32 reserved;
};

#define IRQ_SENSOR_IOC_MAGIC	'q'
#define IRQ_SENSOR_IOC_SET_CONFIG	_IOW(IRQ_SENSOR_IOC_MAGIC, 1, struct irq_sensor_config)
#define IRQ_SENSOR_IOC_GET_CONFIG	_IOR(IRQ_SENSOR_IOC_MAGIC, 2, struct irq_sensor_config)
#define IRQ_SENSOR_IOC_GET_COUNTERS	_IOR(IRQ_SENSOR_IOC_MAGIC, 3, struct irq_sensor_counters)
#define IRQ_SENSOR_IOC_ACK_USER		_IOW(IRQ_SENSOR_IOC_MAGIC, 4, __u32)
#define IRQ_SENSOR_IOC_SET_HOG		_IOW(IRQ_SENSOR_IOC_MAGIC, 5, struct irq_sensor_hog)
#define IRQ_SENSOR_IOC_FIRE		_IO(IRQ_SENSOR_IOC_MAGIC, 6)
#define IRQ_SENSOR_IOC_CLEAR_STATS	_IO(IRQ_SENSOR_IOC_MAGIC, 7)
/*
 * RESET: CTRL.RESET, then the driver re-enables interrupts and empties its
 * queues (the device returns to its defaults, generator off, seq from 1).
 * KEEP_RUNNING (__u32, 0 or 1): with 1, the next last close leaves the
 * generator running; any SET_CONFIG clears it again.
 */
#define IRQ_SENSOR_IOC_RESET		_IO(IRQ_SENSOR_IOC_MAGIC, 8)
#define IRQ_SENSOR_IOC_KEEP_RUNNING	_IOW(IRQ_SENSOR_IOC_MAGIC, 9, __u32)

#endif /* IRQ_SENSOR_UAPI_H */
