/*
 * iftrack: an exact interrupt-flag tracker for x86 guests (TCG plugin).
 *
 * Follows EFLAGS.IF on every vCPU and measures every hard-off window (IF
 * clear) in guest instructions and in virtual nanoseconds, at close to
 * full TCG speed:
 *
 *  - At translation time the instruction bytes are decoded and only the
 *    instructions that can change IF get a callback: cli, sti, popf, iret,
 *    sysret, sysexit, and the ones that enter the kernel through a gate
 *    (syscall, sysenter, int n, int3, int1, into, rsm).  The callback
 *    reads EFLAGS before the instruction and marks the vCPU "pending";
 *    the first instruction executed next (same block or next block, a
 *    conditional callback) reads EFLAGS after it.
 *  - Interrupt and exception delivery clears IF without any instruction:
 *    the runner passes the addresses of the kernel's IDT entry points
 *    (entries=FILE); their first instruction gets a callback that reads
 *    the hardware-pushed frame (the interrupted RIP and RFLAGS) and opens
 *    a window when the interrupted context had IF set.
 *  - Every instruction is counted inline (a per-vCPU scoreboard), so a
 *    window's length in instructions is exact.  Under -icount the virtual
 *    clock advances by 2^shift ns per instruction of any vCPU, so a
 *    window's virtual ns is exact too (icount_shift=N); without icount
 *    the host's monotonic clock stands in (marked in the output).
 *
 * Self-checks, all expected to be 0: the EFLAGS read before an
 * IF-changing instruction or the RFLAGS saved in an entry frame disagree
 * with the tracked state (if_mismatch).
 *
 * Output: one JSON document at exit (out=FILE); see qemu-device/README.md.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define X86_EFLAGS_IF       0x200ULL
#define KERNEL_HALF         0xffff800000000000ULL
/*
 * Below 1 MiB runs real-mode code (firmware, the AP trampoline), whose
 * interrupts go through the IVT, which the tracker does not watch.
 */
#define FIRMWARE_TOP        0x100000ULL
#define HIST_SUB            4               /* sub-buckets per power of 2 */
#define HIST_BUCKETS        (64 * HIST_SUB)
#define DEFAULT_TOP         20

/* What an instrumented instruction is */
enum insn_kind {
    K_CLI, K_STI, K_POPF, K_IRET, K_SYSRET, K_SYSEXIT,
    K_SYSCALL, K_SYSENTER, K_INT, K_RSM, K__MAX
};

static const char *const insn_names[K__MAX] = {
    [K_CLI] = "cli", [K_STI] = "sti", [K_POPF] = "popf", [K_IRET] = "iret",
    [K_SYSRET] = "sysret", [K_SYSEXIT] = "sysexit", [K_SYSCALL] = "syscall",
    [K_SYSENTER] = "sysenter", [K_INT] = "int", [K_RSM] = "rsm",
};

/* How a window was opened */
enum open_kind {
    O_RESET,        /* vCPU reset or hotplug: IF is clear from the start */
    O_INSN,         /* an instruction (cli, popf, iret...) cleared IF */
    O_GATE,         /* syscall/sysenter/int n: the kernel entry masks IF */
    O_ENTRY,        /* interrupt or exception delivery (IDT entry) */
    O_UNKNOWN,      /* found clear without having seen why (if_mismatch) */
};

static const char *const open_names[] = {
    [O_RESET] = "reset", [O_INSN] = "insn", [O_GATE] = "gate",
    [O_ENTRY] = "entry", [O_UNKNOWN] = "unknown",
};

/* Per instrumented instruction (interned: one per address and kind) */
typedef struct {
    uint64_t pc;
    enum insn_kind kind;
} InsnInfo;

/* An IDT entry point, from entries=FILE */
typedef struct {
    uint64_t addr;
    bool errcode;           /* the CPU pushes an error code */
    char *cls;              /* irq, timer, ipi, exception, nmi, ... */
    char *name;
} EntryInfo;

typedef struct {
    uint64_t count;
    uint64_t total_insns;
    uint64_t max_insns;
    uint64_t total_ns;
    uint64_t max_ns;
    uint32_t hist_ns[HIST_BUCKETS];
    uint32_t hist_insns[HIST_BUCKETS];
} Agg;

typedef struct {
    uint64_t site;
    enum open_kind kind;
    enum insn_kind insn;    /* when kind == O_INSN or O_GATE */
    Agg agg;
    uint64_t violations;
} SiteAgg;

/* One window end */
typedef struct {
    uint64_t pc;            /* the instruction, or the entry point */
    int insn;               /* enum insn_kind, or -1 */
    uint64_t insns;         /* this vCPU's instructions before it */
    uint64_t all_insns;     /* all vCPUs' instructions before it */
    uint64_t host_ns;       /* host monotonic, since the plugin started */
} Point;

typedef struct {
    unsigned int vcpu;
    enum open_kind kind;
    Point open, close;
    uint64_t from_rip;      /* interrupted RIP (O_ENTRY, O_GATE), else 0 */
    const EntryInfo *entry; /* O_ENTRY */
    uint64_t insns, ns;
    bool violation;
} Window;

typedef struct {
    bool known;             /* state established */
    bool if_on;
    Window open;            /* valid while !if_on */
    /* the IF-changing instruction whose effect is not read yet */
    const InsnInfo *pend;
    Point pend_at;
    /* counters */
    uint64_t transitions, windows, if_mismatch, entries, gates;
    uint64_t if_mismatch_firmware;  /* below FIRMWARE_TOP: not judged */
    uint64_t kmax_ns, kmax_insns;   /* longest kernel window */
    uint64_t initial_insns;     /* length of the window from reset */
    bool initial_done;
    /* where IF last changed as tracked, and the first mismatch (diagnosis) */
    uint64_t last_change_pc;
    bool mismatch_seen;
    bool mismatch_tracked_if;
    const char *mismatch_where;     /* "insn" or "entry" */
    uint64_t mismatch_pc, mismatch_rip, mismatch_last_change_pc;
    struct qemu_plugin_register *reg_eflags, *reg_rsp, *reg_rcx, *reg_r11;
} VcpuState;

typedef struct {
    uint64_t insns;
    uint64_t pending;
} Score;

/* Configuration */
static char *out_path;
static char *windows_path;
static int icount_shift = -1;
static int top_n = DEFAULT_TOP;
static bool landings_on;
static GHashTable *allow;       /* uint64 address set */
static bool have_allow;
static GHashTable *entries;     /* address -> EntryInfo */

/* State */
static struct qemu_plugin_scoreboard *score;
static qemu_plugin_u64 sc_insns, sc_pending;
static VcpuState *vcpus;
static int max_vcpus;
static GMutex lock;             /* everything below and the interning */
static GHashTable *insn_infos;  /* (pc << 4 | kind) -> InsnInfo */
static GHashTable *sites;       /* site key -> SiteAgg */
static GHashTable *landings;    /* "rip/class" -> count */
static Agg all_kernel;          /* windows opened in kernel space */
static Agg all_outside;         /* windows opened outside it (firmware, boot) */
static Window *top;
static int top_len;
static uint64_t violations_total;
static FILE *windows_file;
static uint64_t t0_host;

static uint64_t host_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec - t0_host;
}

static unsigned hist_bucket(uint64_t v)
{
    int msb;

    if (v < HIST_SUB) {
        return v;
    }
    msb = 63 - __builtin_clzll(v);
    /* HIST_SUB == 4: the two bits below the top one pick the sub-bucket */
    return msb * HIST_SUB + ((v >> (msb - 2)) & 3);
}

static uint64_t hist_lower(unsigned b)
{
    unsigned msb = b / HIST_SUB, sub = b % HIST_SUB;

    if (msb < 2) {
        return b < HIST_SUB ? b : (1ULL << msb);
    }
    return (1ULL << msb) | ((uint64_t)sub << (msb - 2));
}

static void agg_add(Agg *a, uint64_t insns, uint64_t ns)
{
    a->count++;
    a->total_insns += insns;
    a->total_ns += ns;
    if (insns > a->max_insns) {
        a->max_insns = insns;
    }
    if (ns > a->max_ns) {
        a->max_ns = ns;
    }
    a->hist_ns[hist_bucket(ns)]++;
    a->hist_insns[hist_bucket(insns)]++;
}

/* The lower bound of the bucket holding the q-quantile (0 < q <= 1) */
static uint64_t hist_quantile(const uint32_t *h, uint64_t count, double q)
{
    uint64_t want = (uint64_t)(q * count + 0.999999), seen = 0;
    unsigned b;

    if (!count) {
        return 0;
    }
    for (b = 0; b < HIST_BUCKETS; b++) {
        seen += h[b];
        if (seen >= want) {
            return hist_lower(b);
        }
    }
    return hist_lower(HIST_BUCKETS - 1);
}

/* Register access (current vCPU) */

static uint64_t read_reg(struct qemu_plugin_register *reg)
{
    g_autoptr(GByteArray) buf = g_byte_array_new();
    uint64_t v = 0;
    int n;

    if (!reg) {
        return 0;
    }
    n = qemu_plugin_read_register(reg, buf);
    if (n > 0) {
        memcpy(&v, buf->data, MIN((size_t)n, sizeof(v)));   /* little-endian */
    }
    return v;
}

static bool read_u64s(uint64_t vaddr, uint64_t *out, int n)
{
    g_autoptr(GByteArray) buf = g_byte_array_new();

    if (!qemu_plugin_read_memory_vaddr(vaddr, buf, n * 8) ||
        buf->len < (guint)n * 8) {
        return false;
    }
    memcpy(out, buf->data, n * 8);
    return true;
}

static Point point_now(unsigned int vcpu, uint64_t pc, int insn)
{
    Point p = {
        .pc = pc,
        .insn = insn,
        .insns = qemu_plugin_u64_get(sc_insns, vcpu),
        .all_insns = qemu_plugin_u64_sum(sc_insns),
        .host_ns = host_ns(),
    };
    return p;
}

/* Windows */

static uint64_t site_key(uint64_t site, enum open_kind kind)
{
    /* entries and instructions at one address are different sites */
    return (site << 3) | kind;
}

static SiteAgg *site_agg(const Window *w)
{
    uint64_t key = site_key(w->open.pc, w->kind);
    SiteAgg *s = g_hash_table_lookup(sites, &key);

    if (!s) {
        uint64_t *k = g_new(uint64_t, 1);

        *k = key;
        s = g_new0(SiteAgg, 1);
        s->site = w->open.pc;
        s->kind = w->kind;
        s->insn = w->open.insn;
        g_hash_table_insert(sites, k, s);
    }
    return s;
}

static void top_insert(const Window *w)
{
    int i, min = 0;

    if (top_n <= 0) {
        return;
    }
    if (top_len < top_n) {
        top[top_len++] = *w;
        return;
    }
    for (i = 1; i < top_len; i++) {
        if (top[i].ns < top[min].ns ||
            (top[i].ns == top[min].ns && top[i].insns < top[min].insns)) {
            min = i;
        }
    }
    if (w->ns > top[min].ns ||
        (w->ns == top[min].ns && w->insns > top[min].insns)) {
        top[min] = *w;
    }
}

static void window_json(GString *s, const Window *w);

/* Called with lock held */
static void window_done(VcpuState *v, Window *w, Point close)
{
    bool kernel = w->open.pc >= KERNEL_HALF;

    w->close = close;
    w->insns = close.insns - w->open.insns;
    if (icount_shift >= 0) {
        w->ns = (close.all_insns - w->open.all_insns) << icount_shift;
    } else {
        w->ns = close.host_ns - w->open.host_ns;
    }
    v->windows++;
    if (w->kind == O_RESET) {
        if (!v->initial_done) {
            v->initial_insns = w->insns;
            v->initial_done = true;
        }
        return;
    }
    if (w->kind == O_UNKNOWN) {
        return;
    }
    if (!kernel) {
        agg_add(&all_outside, w->insns, w->ns);
        return;
    }
    w->violation = have_allow && w->kind == O_INSN &&
        !g_hash_table_contains(allow, &w->open.pc);
    agg_add(&all_kernel, w->insns, w->ns);
    v->kmax_ns = MAX(v->kmax_ns, w->ns);
    v->kmax_insns = MAX(v->kmax_insns, w->insns);
    {
        SiteAgg *sa = site_agg(w);

        agg_add(&sa->agg, w->insns, w->ns);
        if (w->violation) {
            sa->violations++;
            violations_total++;
        }
    }
    top_insert(w);
    if (windows_file) {
        g_autoptr(GString) line = g_string_new(NULL);

        window_json(line, w);
        fprintf(windows_file, "%s\n", line->str);
    }
}

static void open_window(VcpuState *v, unsigned int vcpu, enum open_kind kind,
                        Point at, uint64_t from_rip, const EntryInfo *entry)
{
    v->if_on = false;
    v->known = true;
    memset(&v->open, 0, sizeof(v->open));
    v->open.vcpu = vcpu;
    v->open.kind = kind;
    v->open.open = at;
    v->open.from_rip = from_rip;
    v->open.entry = entry;
    v->transitions++;
}

static void close_window(VcpuState *v, Point at)
{
    v->if_on = true;
    v->known = true;
    v->transitions++;
    g_mutex_lock(&lock);
    window_done(v, &v->open, at);
    g_mutex_unlock(&lock);
}

/* Apply an observed IF value that follows the instruction at 'at' */
static void apply_if(VcpuState *v, unsigned int vcpu, bool if_on,
                     const InsnInfo *by, Point at, uint64_t gate_to)
{
    if (!v->known) {
        v->known = true;
        v->if_on = if_on;
        if (!if_on) {
            open_window(v, vcpu, O_UNKNOWN, at, 0, NULL);
        }
        return;
    }
    if (if_on == v->if_on) {
        return;
    }
    if (if_on) {
        close_window(v, at);
    } else if (by && (by->kind == K_SYSCALL || by->kind == K_SYSENTER ||
                      by->kind == K_INT)) {
        /* the gate's entry point is the site; the instruction is the origin */
        Point entry = at;

        entry.pc = gate_to;
        entry.insn = by->kind;
        v->gates++;
        open_window(v, vcpu, O_GATE, entry, at.pc, NULL);
    } else {
        open_window(v, vcpu, O_INSN, at, 0, NULL);
    }
}

/* Resolve a pending IF-changing instruction with IF as now observed */
static void resolve_pending(VcpuState *v, unsigned int vcpu, bool if_on,
                            uint64_t here)
{
    const InsnInfo *by = v->pend;

    v->pend = NULL;
    qemu_plugin_u64_set(sc_pending, vcpu, 0);
    if (if_on != v->if_on) {
        v->last_change_pc = v->pend_at.pc;
    }
    apply_if(v, vcpu, if_on, by, v->pend_at, here);
}

/* Callbacks */

static void vcpu_init(qemu_plugin_id_t id, unsigned int vcpu)
{
    g_autoptr(GArray) regs = qemu_plugin_get_registers();
    VcpuState *v;
    guint i;

    if ((int)vcpu >= max_vcpus) {
        return;
    }
    v = &vcpus[vcpu];
    for (i = 0; regs && i < regs->len; i++) {
        qemu_plugin_reg_descriptor *rd =
            &g_array_index(regs, qemu_plugin_reg_descriptor, i);

        if (!strcmp(rd->name, "eflags")) {
            v->reg_eflags = rd->handle;
        } else if (!strcmp(rd->name, "rsp")) {
            v->reg_rsp = rd->handle;
        } else if (!strcmp(rd->name, "rcx")) {
            v->reg_rcx = rd->handle;
        } else if (!strcmp(rd->name, "r11")) {
            v->reg_r11 = rd->handle;
        }
    }
    /*
     * A vCPU starts with IF clear (reset state), and has run nothing yet;
     * its scoreboard entry cannot be read before this callback returns.
     */
    {
        Point start = {
            .insn = -1,
            .all_insns = qemu_plugin_u64_sum(sc_insns),
            .host_ns = host_ns(),
        };

        v->known = true;
        v->if_on = true;
        open_window(v, vcpu, O_RESET, start, 0, NULL);
    }
}

/* Keep the first mismatch of a vCPU: where, and where IF last changed */
static void note_mismatch(VcpuState *v, const char *where, uint64_t pc,
                          uint64_t rip)
{
    if (pc < FIRMWARE_TOP) {
        v->if_mismatch_firmware++;
        return;
    }
    v->if_mismatch++;
    if (v->mismatch_seen) {
        return;
    }
    v->mismatch_seen = true;
    v->mismatch_tracked_if = v->if_on;
    v->mismatch_where = where;
    v->mismatch_pc = pc;
    v->mismatch_rip = rip;
    v->mismatch_last_change_pc = v->last_change_pc;
}

/* Before an IF-changing instruction */
static void insn_before(unsigned int vcpu, void *udata)
{
    const InsnInfo *ii = udata;
    VcpuState *v = &vcpus[vcpu];
    bool if_on = read_reg(v->reg_eflags) & X86_EFLAGS_IF;

    if (v->pend) {
        /* the previous one ended its block without a block following */
        resolve_pending(v, vcpu, if_on, ii->pc);
    }
    if (v->known && if_on != v->if_on) {
        note_mismatch(v, "insn", ii->pc, 0);
        g_mutex_lock(&lock);
        if (if_on) {
            v->if_on = true;        /* drop the window we cannot close */
        } else {
            open_window(v, vcpu, O_UNKNOWN, point_now(vcpu, ii->pc, -1), 0,
                        NULL);
        }
        g_mutex_unlock(&lock);
    }
    v->pend = ii;
    v->pend_at = point_now(vcpu, ii->pc, ii->kind);
    qemu_plugin_u64_set(sc_pending, vcpu, 1);
}

/* The first instruction after an IF-changing one (conditional on pending) */
static void insn_after(unsigned int vcpu, void *udata)
{
    VcpuState *v = &vcpus[vcpu];
    uint64_t here = (uint64_t)(uintptr_t)udata;

    if (!v->pend) {
        qemu_plugin_u64_set(sc_pending, vcpu, 0);
        return;
    }
    resolve_pending(v, vcpu, read_reg(v->reg_eflags) & X86_EFLAGS_IF, here);
}

static void landing(const EntryInfo *e, uint64_t rip)
{
    g_autofree char *key = g_strdup_printf("%" PRIx64 "/%s", rip, e->cls);
    gpointer old = g_hash_table_lookup(landings, key);

    g_hash_table_replace(landings, g_steal_pointer(&key),
                         GSIZE_TO_POINTER(GPOINTER_TO_SIZE(old) + 1));
}

/* The first instruction of an IDT entry point: interrupt/exception delivery */
static void entry_cb(unsigned int vcpu, void *udata)
{
    const EntryInfo *e = udata;
    VcpuState *v = &vcpus[vcpu];
    uint64_t frame[6], rsp = read_reg(v->reg_rsp);
    uint64_t rip, rflags;
    bool if_now = read_reg(v->reg_eflags) & X86_EFLAGS_IF;
    bool was_on;
    int skip = e->errcode ? 1 : 0;

    v->entries++;
    if (!read_u64s(rsp, frame, 6)) {
        /* cannot read the frame: fall back to what EFLAGS says now */
        if (v->pend) {
            resolve_pending(v, vcpu, if_now, e->addr);
        }
        return;
    }
    rip = frame[skip];
    rflags = frame[skip + 2];
    was_on = rflags & X86_EFLAGS_IF;
    /* the interrupted context's IF is the outcome of a pending instruction */
    if (v->pend) {
        resolve_pending(v, vcpu, was_on, e->addr);
    } else if (v->known && was_on != v->if_on) {
        note_mismatch(v, "entry", e->addr, rip);
        apply_if(v, vcpu, was_on, NULL, point_now(vcpu, e->addr, -1), 0);
    }
    if (landings_on && strcmp(e->cls, "exception") != 0) {
        g_mutex_lock(&lock);
        landing(e, rip);
        g_mutex_unlock(&lock);
    }
    if (was_on && !if_now) {
        open_window(v, vcpu, O_ENTRY, point_now(vcpu, e->addr, -1), rip, e);
        v->last_change_pc = e->addr;
    } else if (!if_now) {
        v->if_on = false;
    }
}

/* Decoding: which instructions can change IF */

static bool is_prefix(uint8_t b)
{
    switch (b) {
    case 0x26: case 0x2e: case 0x36: case 0x3e: case 0x64: case 0x65:
    case 0x66: case 0x67: case 0xf0: case 0xf2: case 0xf3:
        return true;
    }
    return b >= 0x40 && b <= 0x4f;      /* REX: QEMU gives exact lengths */
}

static int decode(const uint8_t *b, size_t len)
{
    size_t i = 0;

    while (i < len && i < 14 && is_prefix(b[i])) {
        i++;
    }
    if (i >= len) {
        return -1;
    }
    if (len - i == 1) {
        switch (b[i]) {
        case 0xfa: return K_CLI;
        case 0xfb: return K_STI;
        case 0x9d: return K_POPF;
        case 0xcf: return K_IRET;
        case 0xcc: case 0xce: case 0xf1: return K_INT;
        }
    } else if (len - i == 2) {
        if (b[i] == 0xcd) {
            return K_INT;
        }
        if (b[i] == 0x0f) {
            switch (b[i + 1]) {
            case 0x05: return K_SYSCALL;
            case 0x07: return K_SYSRET;
            case 0x34: return K_SYSENTER;
            case 0x35: return K_SYSEXIT;
            case 0xaa: return K_RSM;
            }
        }
    }
    return -1;
}

static const InsnInfo *intern_insn(uint64_t pc, enum insn_kind kind)
{
    uint64_t key = (pc << 4) | kind;
    InsnInfo *ii;

    g_mutex_lock(&lock);
    ii = g_hash_table_lookup(insn_infos, &key);
    if (!ii) {
        uint64_t *k = g_new(uint64_t, 1);

        *k = key;
        ii = g_new0(InsnInfo, 1);
        ii->pc = pc;
        ii->kind = kind;
        g_hash_table_insert(insn_infos, k, ii);
    }
    g_mutex_unlock(&lock);
    return ii;
}

static void vcpu_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    size_t n = qemu_plugin_tb_n_insns(tb), i;
    bool prev_changes = false;

    for (i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        uint64_t pc = qemu_plugin_insn_vaddr(insn);
        uint8_t bytes[16];
        size_t len = qemu_plugin_insn_data(insn, bytes, sizeof(bytes));
        int kind = decode(bytes, len);
        const EntryInfo *e = NULL;

        if (i == 0 && entries) {
            e = g_hash_table_lookup(entries, &pc);
        }
        /* callbacks first: they see the count before this instruction */
        if (e) {
            qemu_plugin_register_vcpu_insn_exec_cb(insn, entry_cb,
                                                   QEMU_PLUGIN_CB_R_REGS,
                                                   (void *)e);
        } else if (i == 0 || prev_changes) {
            qemu_plugin_register_vcpu_insn_exec_cond_cb(
                insn, insn_after, QEMU_PLUGIN_CB_R_REGS,
                QEMU_PLUGIN_COND_NE, sc_pending, 0,
                (void *)(uintptr_t)pc);
        }
        if (kind >= 0) {
            qemu_plugin_register_vcpu_insn_exec_cb(
                insn, insn_before, QEMU_PLUGIN_CB_R_REGS,
                (void *)intern_insn(pc, kind));
        }
        qemu_plugin_register_vcpu_insn_exec_inline_per_vcpu(
            insn, QEMU_PLUGIN_INLINE_ADD_U64, sc_insns, 1);
        prev_changes = kind >= 0;
    }
}

/* Output */

static void point_json(GString *s, const char *name, const Point *p)
{
    g_string_append_printf(s, "\"%s\": {\"pc\": \"0x%" PRIx64 "\", "
                           "\"insn\": %s%s%s, \"t_insns\": %" PRIu64
                           ", \"t_all_insns\": %" PRIu64
                           ", \"t_host_ns\": %" PRIu64 "}",
                           name, p->pc, p->insn >= 0 ? "\"" : "",
                           p->insn >= 0 ? insn_names[p->insn] : "null",
                           p->insn >= 0 ? "\"" : "", p->insns, p->all_insns,
                           p->host_ns);
}

static void window_json(GString *s, const Window *w)
{
    g_string_append_printf(s, "{\"vcpu\": %u, \"kind\": \"%s\", "
                           "\"insns\": %" PRIu64 ", \"ns\": %" PRIu64 ", ",
                           w->vcpu, open_names[w->kind], w->insns, w->ns);
    point_json(s, "open", &w->open);
    g_string_append(s, ", ");
    point_json(s, "close", &w->close);
    if (w->kind == O_ENTRY || w->kind == O_GATE) {
        g_string_append_printf(s, ", \"from_rip\": \"0x%" PRIx64 "\"",
                               w->from_rip);
    }
    if (w->entry) {
        g_string_append_printf(s, ", \"entry\": \"%s\", \"class\": \"%s\"",
                               w->entry->name, w->entry->cls);
    }
    g_string_append_printf(s, ", \"violation\": %s}",
                           w->violation ? "true" : "false");
}

static void hist_json(GString *s, const uint32_t *h)
{
    bool first = true;
    unsigned b;

    g_string_append(s, "[");
    for (b = 0; b < HIST_BUCKETS; b++) {
        if (h[b]) {
            g_string_append_printf(s, "%s[%" PRIu64 ", %u]", first ? "" : ", ",
                                   hist_lower(b), h[b]);
            first = false;
        }
    }
    g_string_append(s, "]");
}

static void agg_json(GString *s, const Agg *a, bool hist)
{
    g_string_append_printf(s, "\"count\": %" PRIu64 ", \"total_insns\": %"
                           PRIu64 ", \"max_insns\": %" PRIu64
                           ", \"p50_insns\": %" PRIu64 ", \"p99_insns\": %"
                           PRIu64 ", \"total_ns\": %" PRIu64
                           ", \"max_ns\": %" PRIu64 ", \"p50_ns\": %" PRIu64
                           ", \"p99_ns\": %" PRIu64,
                           a->count, a->total_insns, a->max_insns,
                           hist_quantile(a->hist_insns, a->count, 0.5),
                           hist_quantile(a->hist_insns, a->count, 0.99),
                           a->total_ns, a->max_ns,
                           hist_quantile(a->hist_ns, a->count, 0.5),
                           hist_quantile(a->hist_ns, a->count, 0.99));
    if (hist) {
        g_string_append(s, ", \"hist_ns\": ");
        hist_json(s, a->hist_ns);
        g_string_append(s, ", \"hist_insns\": ");
        hist_json(s, a->hist_insns);
    }
}

static gint cmp_site(gconstpointer a, gconstpointer b)
{
    const SiteAgg *x = *(SiteAgg * const *)a, *y = *(SiteAgg * const *)b;

    if (x->agg.max_ns != y->agg.max_ns) {
        return x->agg.max_ns < y->agg.max_ns ? 1 : -1;
    }
    return x->site < y->site ? -1 : x->site > y->site;
}

static gint cmp_window(gconstpointer a, gconstpointer b)
{
    const Window *x = a, *y = b;

    if (x->ns != y->ns) {
        return x->ns < y->ns ? 1 : -1;
    }
    return x->insns < y->insns ? 1 : x->insns > y->insns ? -1 : 0;
}

static void write_json(void)
{
    g_autoptr(GString) s = g_string_new("{\n");
    g_autoptr(GPtrArray) list = g_ptr_array_new();
    GHashTableIter it;
    gpointer key, val;
    uint64_t mismatch = 0, mismatch_fw = 0, vcount = 0;
    FILE *f;
    int i;
    guint j;

    g_string_append_printf(s, "  \"tool\": \"iftrack\", \"version\": 1,\n"
                           "  \"clock\": \"%s\", \"icount_shift\": %d,\n"
                           "  \"allow_list\": %s, \"allowed_sites\": %u,"
                           " \"entry_points\": %u,\n",
                           icount_shift >= 0 ? "icount" : "host", icount_shift,
                           have_allow ? "true" : "false",
                           have_allow ? g_hash_table_size(allow) : 0,
                           entries ? g_hash_table_size(entries) : 0);
    g_string_append(s, "  \"vcpus\": [");
    for (i = 0; i < max_vcpus; i++) {
        VcpuState *v = &vcpus[i];

        if (!v->reg_eflags) {
            continue;
        }
        mismatch += v->if_mismatch;
        mismatch_fw += v->if_mismatch_firmware;
        g_string_append_printf(s, "%s\n    {\"vcpu\": %d, \"insns\": %" PRIu64
                               ", \"transitions\": %" PRIu64
                               ", \"windows\": %" PRIu64
                               ", \"entries\": %" PRIu64 ", \"gates\": %"
                               PRIu64 ", \"if_mismatch\": %" PRIu64
                               ", \"initial_insns\": %" PRIu64
                               ", \"max_ns\": %" PRIu64
                               ", \"max_insns\": %" PRIu64
                               ", \"if_on_at_exit\": %s",
                               vcount++ ? "," : "", i,
                               qemu_plugin_u64_get(sc_insns, i),
                               v->transitions, v->windows, v->entries,
                               v->gates, v->if_mismatch, v->initial_insns,
                               v->kmax_ns, v->kmax_insns,
                               v->if_on ? "true" : "false");
        if (v->mismatch_seen) {
            g_string_append_printf(s, ", \"first_mismatch\": {\"where\": "
                                   "\"%s\", \"pc\": \"0x%" PRIx64 "\", "
                                   "\"interrupted_rip\": \"0x%" PRIx64
                                   "\", \"tracked_if\": %s, "
                                   "\"last_change_pc\": \"0x%" PRIx64 "\"}",
                                   v->mismatch_where, v->mismatch_pc,
                                   v->mismatch_rip,
                                   v->mismatch_tracked_if ? "true" : "false",
                                   v->mismatch_last_change_pc);
        }
        g_string_append(s, "}");
    }
    g_string_append_printf(s, "\n  ],\n  \"if_mismatch\": %" PRIu64 ",\n"
                           "  \"if_mismatch_firmware\": %" PRIu64 ",\n",
                           mismatch, mismatch_fw);
    g_string_append_printf(s, "  \"violations\": %" PRIu64 ",\n",
                           have_allow ? violations_total : 0);
    g_string_append(s, "  \"kernel\": {");
    agg_json(s, &all_kernel, true);
    g_string_append(s, "},\n  \"outside_kernel\": {");
    agg_json(s, &all_outside, false);
    g_string_append(s, "},\n  \"sites\": [");

    g_hash_table_iter_init(&it, sites);
    while (g_hash_table_iter_next(&it, &key, &val)) {
        g_ptr_array_add(list, val);
    }
    g_ptr_array_sort(list, cmp_site);
    for (j = 0; j < list->len; j++) {
        const SiteAgg *sa = g_ptr_array_index(list, j);

        g_string_append_printf(s, "%s\n    {\"site\": \"0x%" PRIx64
                               "\", \"kind\": \"%s\", \"insn\": %s%s%s, "
                               "\"violations\": %" PRIu64 ", ",
                               j ? "," : "", sa->site, open_names[sa->kind],
                               sa->kind == O_ENTRY ? "" : "\"",
                               sa->kind == O_ENTRY ? "null" :
                               insn_names[sa->insn],
                               sa->kind == O_ENTRY ? "" : "\"",
                               sa->violations);
        agg_json(s, &sa->agg, false);
        g_string_append(s, "}");
    }
    g_string_append(s, "\n  ],\n  \"top\": [");
    qsort(top, top_len, sizeof(*top), (int (*)(const void *,
                                                const void *))cmp_window);
    for (i = 0; i < top_len; i++) {
        g_string_append_printf(s, "%s\n    ", i ? "," : "");
        window_json(s, &top[i]);
    }
    g_string_append(s, "\n  ]");
    if (landings_on) {
        bool first = true;

        g_string_append(s, ",\n  \"landings\": [");
        g_hash_table_iter_init(&it, landings);
        while (g_hash_table_iter_next(&it, &key, &val)) {
            const char *k = key, *slash = strchr(k, '/');

            g_string_append_printf(s, "%s\n    {\"rip\": \"0x%.*s\", "
                                   "\"class\": \"%s\", \"count\": %"
                                   G_GSIZE_FORMAT "}", first ? "" : ",",
                                   (int)(slash - k), k, slash + 1,
                                   GPOINTER_TO_SIZE(val));
            first = false;
        }
        g_string_append(s, "\n  ]");
    }
    g_string_append(s, "\n}\n");

    f = fopen(out_path, "w");
    if (!f) {
        g_autofree char *msg = g_strdup_printf("iftrack: cannot write %s\n",
                                               out_path);
        qemu_plugin_outs(msg);
        return;
    }
    fputs(s->str, f);
    fclose(f);
}

static void plugin_exit(qemu_plugin_id_t id, void *p)
{
    g_mutex_lock(&lock);
    write_json();
    if (windows_file) {
        fclose(windows_file);
        windows_file = NULL;
    }
    g_mutex_unlock(&lock);
}

/* Arguments */

static bool parse_u64(const char *s, uint64_t *out)
{
    char *end;

    *out = g_ascii_strtoull(s, &end, 0);
    return end != s && (*end == '\0' || *end == '\n' || *end == ' ');
}

/* One address a line (hex with 0x, or decimal); '#' starts a comment */
static bool load_allow(const char *path)
{
    g_autofree char *text = NULL;
    g_auto(GStrv) lines = NULL;
    int i;

    if (!g_file_get_contents(path, &text, NULL, NULL)) {
        return false;
    }
    allow = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    lines = g_strsplit(text, "\n", -1);
    for (i = 0; lines[i]; i++) {
        uint64_t a, *k;

        g_strstrip(lines[i]);
        if (!lines[i][0] || lines[i][0] == '#') {
            continue;
        }
        if (!parse_u64(lines[i], &a)) {
            return false;
        }
        k = g_new(uint64_t, 1);
        *k = a;
        g_hash_table_add(allow, k);
    }
    have_allow = true;
    return true;
}

/* "ADDR ERRCODE CLASS NAME" a line: ERRCODE 1 if the CPU pushes one */
static bool load_entries(const char *path)
{
    g_autofree char *text = NULL;
    g_auto(GStrv) lines = NULL;
    int i;

    if (!g_file_get_contents(path, &text, NULL, NULL)) {
        return false;
    }
    entries = g_hash_table_new(g_int64_hash, g_int64_equal);
    lines = g_strsplit(text, "\n", -1);
    for (i = 0; lines[i]; i++) {
        g_auto(GStrv) f = NULL;
        EntryInfo *e;

        g_strstrip(lines[i]);
        if (!lines[i][0] || lines[i][0] == '#') {
            continue;
        }
        f = g_strsplit_set(lines[i], " \t", 4);
        if (g_strv_length(f) != 4) {
            return false;
        }
        e = g_new0(EntryInfo, 1);
        if (!parse_u64(f[0], &e->addr)) {
            return false;
        }
        e->errcode = f[1][0] == '1';
        e->cls = g_strdup(f[2]);
        e->name = g_strdup(f[3]);
        g_hash_table_insert(entries, &e->addr, e);
    }
    return true;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
                                           const qemu_info_t *info,
                                           int argc, char **argv)
{
    int i;

    if (!info->system_emulation || strcmp(info->target_name, "x86_64")) {
        qemu_plugin_outs("iftrack: needs qemu-system-x86_64\n");
        return -1;
    }
    for (i = 0; i < argc; i++) {
        g_auto(GStrv) kv = g_strsplit(argv[i], "=", 2);
        uint64_t n;

        if (!kv[0] || !kv[1]) {
            goto bad;
        }
        if (!strcmp(kv[0], "out")) {
            out_path = g_strdup(kv[1]);
        } else if (!strcmp(kv[0], "windows")) {
            windows_path = g_strdup(kv[1]);
        } else if (!strcmp(kv[0], "allow")) {
            if (!load_allow(kv[1])) {
                goto bad;
            }
        } else if (!strcmp(kv[0], "entries")) {
            if (!load_entries(kv[1])) {
                goto bad;
            }
        } else if (!strcmp(kv[0], "icount_shift")) {
            if (!parse_u64(kv[1], &n) || n > 10) {
                goto bad;
            }
            icount_shift = n;
        } else if (!strcmp(kv[0], "top")) {
            if (!parse_u64(kv[1], &n) || n > 10000) {
                goto bad;
            }
            top_n = n;
        } else if (!strcmp(kv[0], "landings")) {
            if (!qemu_plugin_bool_parse(kv[0], kv[1], &landings_on)) {
                goto bad;
            }
        } else {
            goto bad;
        }
        continue;
bad:
        {
            g_autofree char *msg = g_strdup_printf(
                "iftrack: bad argument or unreadable file: %s\n", argv[i]);
            qemu_plugin_outs(msg);
            return -1;
        }
    }
    if (!out_path) {
        qemu_plugin_outs("iftrack: out=FILE is required\n");
        return -1;
    }
    if (windows_path) {
        windows_file = fopen(windows_path, "w");
        if (!windows_file) {
            qemu_plugin_outs("iftrack: cannot write windows=FILE\n");
            return -1;
        }
    }
    t0_host = 0;
    t0_host = host_ns();
    max_vcpus = info->system.max_vcpus;
    vcpus = g_new0(VcpuState, max_vcpus);
    top = g_new0(Window, top_n > 0 ? top_n : 1);
    score = qemu_plugin_scoreboard_new(sizeof(Score));
    sc_insns = qemu_plugin_scoreboard_u64_in_struct(score, Score, insns);
    sc_pending = qemu_plugin_scoreboard_u64_in_struct(score, Score, pending);
    insn_infos = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free,
                                       g_free);
    sites = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
    landings = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);

    qemu_plugin_register_vcpu_init_cb(id, vcpu_init);
    qemu_plugin_register_vcpu_tb_trans_cb(id, vcpu_tb_trans);
    qemu_plugin_register_atexit_cb(id, plugin_exit, NULL);
    return 0;
}
