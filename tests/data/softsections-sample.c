/*
 * Soft-section patterns for tests/test_softsections.py.  The listings next
 * to this file were recorded (gcc 12, binutils 2.40) with
 *   F="-O2 -fno-pic -mno-red-zone -fno-asynchronous-unwind-tables -fcf-protection=none -g"
 *   gcc $F -c softsections-sample.c -o sample.o; gcc $F -c softsections-stubs.c -o stubs.o
 *   gcc -nostdlib -static -no-pie -o sample.elf sample.o stubs.o
 *   objdump -d --no-show-raw-insn sample.elf > softsections-sample.objdump
 *   objdump -d --no-show-raw-insn -r sample.o > softsections-sample-reloc.objdump
 */
void soft_local_irq_disable(void);
void soft_local_irq_enable(void);
unsigned long soft_local_irq_save(void);
void soft_local_irq_restore(unsigned long flags);
void _raw_spin_lock(int *l);
void _raw_spin_unlock_irqrestore(int *l, unsigned long flags);
void panic(const char *m) __attribute__((noreturn));
void work(int x);
__attribute__((cold, noinline)) void slow(int x);
extern int lock;
extern volatile int v;

__attribute__((noinline)) void leaf_swap(void) { asm volatile("swapgs\n\tnop\n\tswapgs"); }

void simple(void)
{
	unsigned long f = soft_local_irq_save();
	leaf_swap();
	soft_local_irq_restore(f);
}

int early_return(int x)
{
	soft_local_irq_disable();
	if (v == x)
		return 1;	/* leaves the function soft-off */
	work(x);
	soft_local_irq_enable();
	return 0;
}

void nested(void)
{
	unsigned long a = soft_local_irq_save(), b;
	work(1);
	b = soft_local_irq_save();
	work(2);
	soft_local_irq_restore(b);
	work(3);
	soft_local_irq_restore(a);
}

void enable_in_callee(void)
{
	soft_local_irq_disable();
	work(4);
}

void loop(int n)
{
	for (int i = 0; i < n; i++) {
		unsigned long f = soft_local_irq_save();
		v += i;
		soft_local_irq_restore(f);
	}
}

void dead_end(int x)
{
	unsigned long f = soft_local_irq_save();
	if (x == 42)
		panic("x");
	work(x);
	soft_local_irq_restore(f);
}

void mixed(void)
{
	unsigned long f = soft_local_irq_save();
	_raw_spin_lock(&lock);
	v = 1;
	_raw_spin_unlock_irqrestore(&lock, f);
}

unsigned long save_wrapper(void)
{
	return soft_local_irq_save();
}

void tail_enable(void)
{
	soft_local_irq_disable();
	v = 5;
	soft_local_irq_enable();
}

void cold_path(int x)
{
	unsigned long f = soft_local_irq_save();
	if (__builtin_expect(v == x, 0))
		slow(x);
	soft_local_irq_restore(f);
}

void disable_inside_save(int x)
{
	unsigned long f = soft_local_irq_save();
	if (x)
		soft_local_irq_disable();	/* no new level */
	work(x);
	soft_local_irq_restore(f);	/* ends the section on both paths */
}
