"""irqrig's gdb package: inventory (no gdb needed), check and commands."""
