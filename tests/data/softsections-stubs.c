int lock;
volatile int v;
__attribute__((noinline)) void soft_local_irq_disable(void) { asm volatile(""); }
__attribute__((noinline)) void soft_local_irq_enable(void) { asm volatile(""); }
__attribute__((noinline)) unsigned long soft_local_irq_save(void) { return v; }
__attribute__((noinline)) void soft_local_irq_restore(unsigned long f) { v = f; }
__attribute__((noinline)) void _raw_spin_lock(int *l) { *l = 1; }
__attribute__((noinline)) void _raw_spin_unlock_irqrestore(int *l, unsigned long f) { *l = f; }
__attribute__((noinline)) void panic(const char *m) { for (;;) ; }
__attribute__((noinline)) void work(int x) { v = x; }
__attribute__((noinline, cold)) void slow(int x) { v = -x; }
void _start(void) { for (;;) ; }
