"""Who sleeps on what: the guest's tasks and each CPU's deferred work.

After a hang the kernel log often says nothing (no lockdep report, no RCU
stall); what names the cause is the list of tasks that wait, what each
waits in (its stack) and on which rt_mutex (pi_blocked_on, with the
owner), and what each CPU still holds back (logged vectors, deferred
wakeups and kthread work of CONFIG_RT_IRQ_DISABLE).  A guest too slow for
its load looks hung too: then tasks are runnable but have not run for a
long time (starved), while each CPU runs some other, often RT, task.
Task list walk as the kernel's scripts/gdb (linux/tasks.py); stacks by
frame pointer, the way the kernel's own unwinder does with
CONFIG_UNWINDER_FRAME_POINTER.
"""

import gdb

from irqrig_gdb import check

TASK_UNINTERRUPTIBLE, TASK_NOLOAD, TASK_RTLOCK_WAIT = 0x2, 0x400, 0x1000
TASK_STATES = ((0x1, "S"), (TASK_UNINTERRUPTIBLE, "D"), (0x4, "T"), (0x8, "t"),
               (0x10, "X"), (0x20, "Z"), (0x80, "K"), (0x100, "W"), (0x200, "P"),
               (TASK_NOLOAD, "N"), (TASK_RTLOCK_WAIT, "RTLOCK_WAIT"))
THREAD_SIZE = 4 << 12                # x86_64 without KASAN (THREAD_SIZE_ORDER 2)
MAX_FRAMES = 24
# Frames that say only "it sleeps": the place it sleeps in is the first other.
SCHEDULER = ("__schedule", "schedule", "preempt_schedule",
             "__preempt_count", "rt_mutex_schedule", "rtlock_slowlock")
RT_MUTEX_HAS_WAITERS = 1
WAKE_Q_TAIL = 1
POLICIES = {0: "other", 1: "fifo", 2: "rr", 3: "batch", 5: "idle", 6: "deadline"}
SCHED_FIFO, SCHED_RR = 1, 2


def state_name(state):
    if state == 0:
        return "R"
    names = [n for bit, n in TASK_STATES if state & bit]
    return "|".join(names) or "0x%x" % state


def all_tasks():
    """Every thread, as linux/tasks.py walks them (init_task's tasks list,
    each group's thread list)."""
    from linux import tasks          # the kernel's scripts/gdb, loaded first
    return tasks.task_lists()


def symbol(addr, lookup=None):
    """'name+0xoff' of addr from the ELF symbol covering lookup (default
    addr), as the kernel prints stacks; None if none covers it."""
    lookup = addr if lookup is None else lookup
    found = check.symbol_offset(lookup)
    if found is None:
        return None
    return "%s+0x%x" % (found[0], found[1] + addr - lookup)


def _ulong(inf, addr):
    return int.from_bytes(bytes(inf.read_memory(addr, 8)), "little")


def stack(task):
    """The return addresses of a task that is not running: from the frame
    __switch_to_asm() left at thread.sp, then each saved frame pointer, as
    long as it stays inside the task's stack."""
    inf = gdb.selected_inferior()
    base = int(task["stack"])
    top = base + THREAD_SIZE
    sp = int(task["thread"]["sp"])
    if not base <= sp < top:
        return []
    frame = gdb.parse_and_eval("(struct inactive_task_frame *)0x%x" % sp)
    bp = int(frame["bp"])
    frames = [int(frame["ret_addr"])]
    while len(frames) < MAX_FRAMES and sp <= bp < top - 16:
        ret = _ulong(inf, bp + 8)
        if ret == 0:
            break
        frames.append(ret)
        sp, bp = bp, _ulong(inf, bp)
    # A return address can be the first byte after a function ending in a
    # call: name the call's place (addr - 1), as the kernel's %pB does.
    return [symbol(a, a - 1) or "0x%x" % a for a in frames]


def sleeps_in(frames):
    for f in frames:
        if not f.startswith(SCHEDULER):
            return f
    return frames[-1] if frames else "?"


def waits(state):
    """Blocked the way the hung-task detector counts: uninterruptible
    but not an idle wait (TASK_NOLOAD), or waiting for an rtlock."""
    return (state & TASK_UNINTERRUPTIBLE and not state & TASK_NOLOAD) or \
        state & TASK_RTLOCK_WAIT


def blocked_on(task):
    """'lock SYMBOL owned by PID/COMM' for a task waiting on an rt_mutex
    (sleeping locks of PREEMPT_RT, rwlocks' writer side, PI futexes)."""
    try:
        waiter = task["pi_blocked_on"]
    except gdb.error:
        return None
    if int(waiter) == 0:
        return None
    lock = waiter["lock"]
    owner = int(lock["owner"]) & ~RT_MUTEX_HAS_WAITERS
    where = symbol(int(lock)) or "0x%x" % int(lock)
    if owner == 0:
        return "lock %s (no owner)" % where
    o = gdb.parse_and_eval("(struct task_struct *)0x%x" % owner)
    return "lock %s owned by %d/%s" % (where, int(o["pid"]), o["comm"].string())


def task_cpu(task):
    """thread_info.cpu on x86 (THREAD_INFO_IN_TASK), else task->cpu."""
    try:
        return int(task["thread_info"]["cpu"])
    except gdb.error:
        return int(task["cpu"])


def policy(task):
    """'other', 'fifo 50', ...: the scheduling class a starved task lost to."""
    pol = int(task["policy"])
    name = POLICIES.get(pol, str(pol))
    if pol in (SCHED_FIFO, SCHED_RR):
        name += " %d" % int(task["rt_priority"])
    return name


def describe(task):
    state = int(task["__state"])
    line = "%6d %-16s %-12s %-9s cpu%d%s" % (
        int(task["pid"]), task["comm"].string(), state_name(state),
        policy(task), task_cpu(task),
        " on-cpu" if int(task["on_cpu"]) else "")
    return line


def per_cpu(name, field, cpu):
    ptr = gdb.parse_and_eval("&" + name)
    addr = int(ptr) + int(gdb.parse_and_eval("__per_cpu_offset[%d]" % cpu))
    return gdb.Value(addr).cast(ptr.type).dereference()[field]


def idle_s(task):
    """Seconds since the task last ran: its runqueue's task clock minus the
    se.exec_start that each class sets when the task is put on the CPU
    (and updates while it runs).  None if unknown: never ran, or moved to
    another CPU since (migrate_task_rq_fair() zeroes it)."""
    start = int(task["se"]["exec_start"])
    if not start:
        return None
    return (int(per_cpu("runqueues", "clock_task", task_cpu(task))) - start) / 1e9


def cpu_pending(cpu):
    """What CPU holds back under CONFIG_RT_IRQ_DISABLE: logged vectors,
    deferred wakeups, kthread works, line locks held (0s when idle)."""
    out = []
    for name, field in (("irqsoft_log", "count"), ("irqsoft_works", "count"),
                        ("irqsoft_lines", "count"), ("irqsoft_lines", "waiting")):
        try:
            out.append("%s.%s %d" % (name, field, int(per_cpu(name, field, cpu))))
        except gdb.error:
            pass
    try:
        # as irqsoft_wakeups_pending(): lastp NULL until first used
        pending = int(per_cpu("irqsoft_wake_q", "lastp", cpu)) and \
            int(per_cpu("irqsoft_wake_q", "first", cpu)) != WAKE_Q_TAIL
        out.append("irqsoft_wake_q %s" % ("PENDING" if pending else "empty"))
    except gdb.error:
        pass
    return ", ".join(out) if out else "no RT_IRQ_DISABLE state"


def cpu_count():
    return len(gdb.selected_inferior().threads())


def one_task(write, task, all_states, waiting, runnable):
    state = int(task["__state"])
    off_cpu = not int(task["on_cpu"])
    # (a CPU's idle task, pid 0, is "runnable" whenever it is not running)
    ready = state == 0 and off_cpu and int(task["pid"])
    if ready:
        try:
            idle = idle_s(task)
            since = ("last run unknown (never ran, or moved CPU since)" if idle is None
                     else "ran %.1f s ago" % idle)
        except gdb.error:
            idle, since = None, "last run unreadable"
        runnable.append((idle, "%d/%s %s cpu%d, %s" % (
            int(task["pid"]), task["comm"].string(), policy(task), task_cpu(task), since)))
    if state == 0 and not ready and not all_states:
        return
    write(describe(task) + "\n")
    on = blocked_on(task)
    if on:
        write("        blocked on %s\n" % on)
    # a task off the CPU, asleep or preempted, left its frame to unwind
    frames = stack(task) if off_cpu else []
    for f in frames:
        write("        %s\n" % f)
    if waits(state):
        waiting.append("%d/%s in %s%s" % (int(task["pid"]), task["comm"].string(),
                                          sleeps_in(frames), " " + on if on else ""))


def report(write, all_states=False):
    """Write the tasks (those not running, or all), the stacks of those
    off the CPU and the rt_mutex each waits on, the waiting and the
    runnable ones, then each CPU's current task and deferred work."""
    waiting, runnable = [], []
    write("tasks: PID COMM STATE POLICY CPU\n")
    for task in all_tasks():
        try:
            one_task(write, task, all_states, waiting, runnable)
        except gdb.error as e:      # a hang can leave a task half written
            write("  task at 0x%x unreadable: %s\n" % (int(task), e))
    write("waiting: %d tasks (uninterruptible, not idle, or rtlock)\n" % len(waiting))
    for w in waiting:
        write("waiting: %s\n" % w)
    # longest off the CPU first: a starved task, not one just preempted
    runnable.sort(key=lambda r: -1 if r[0] is None else r[0], reverse=True)
    write("runnable: %d tasks not on a CPU (seconds since each last ran)\n" % len(runnable))
    for _, what in runnable:
        write("runnable: %s\n" % what)
    for cpu in range(cpu_count()):
        curr = gdb.parse_and_eval("$lx_current(%d)" % cpu)
        write("cpu%d: current %d/%s %s; %s\n" % (
            cpu, int(curr["pid"]), curr["comm"].string(), policy(curr), cpu_pending(cpu)))
