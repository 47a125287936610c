// SPDX-License-Identifier: GPL-2.0
/*
 * Test only: masks interrupts with a bare cli, outside every API, so the
 * instruction is not in .hard_irq_sites.  irqrig's gdb check must report it
 * as a violation naming rogue_cli_section().
 */
#include <linux/module.h>
#include <linux/init.h>

static noinline void rogue_cli_section(void)
{
	unsigned long flags;

	asm volatile("pushf; pop %0; cli" : "=rm" (flags) : : "memory");
	barrier();
	asm volatile("push %0; popf" : : "g" (flags) : "memory", "cc");
}

static int __init rogue_cli_init(void)
{
	rogue_cli_section();
	pr_info("irqrig_rogue_cli: executed a cli outside the hard sections\n");
	return 0;
}

static void __exit rogue_cli_exit(void)
{
}

module_init(rogue_cli_init);
module_exit(rogue_cli_exit);
MODULE_DESCRIPTION("irqrig test: a cli outside the allow-listed hard sections");
MODULE_LICENSE("GPL");
