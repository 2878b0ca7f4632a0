// The few kernel types the BPF programs of waits.bpf.c touch, written by hand instead of a
// vmlinux.h dumped from the build host's BTF: with preserve_access_index every field access is
// a CO-RE relocation that libbpf resolves against the running kernel's BTF at load time, so the
// build needs no /sys/kernel/btf/vmlinux (package builders, containers and CI runners run other
// kernels than the hosts the program runs on) and no 3 MB generated header.
#pragma once

#include <linux/types.h>

typedef __u8 u8;
typedef __u32 u32;
typedef __s32 s32;
typedef __u64 u64;
typedef __s32 pid_t;
typedef _Bool bool;

// The run queue's clock (rq_clock), which stamps sched_info.last_queued; reached from a task
// through its CFS run queue (CONFIG_FAIR_GROUP_SCHED: the per-CPU `runqueues` itself is no
// symbol a program can name on a kernel without CONFIG_KALLSYMS_ALL).
struct rq {
  u64 clock;
} __attribute__((preserve_access_index));

struct cfs_rq {
  struct rq* rq;
} __attribute__((preserve_access_index));

struct sched_entity {
  u64 sum_exec_runtime;
  struct cfs_rq* cfs_rq;
} __attribute__((preserve_access_index));

struct sched_info {
  unsigned long long run_delay;
  unsigned long long last_queued;
} __attribute__((preserve_access_index));

struct bpf_local_storage;

struct task_struct {
  unsigned int flags;
  pid_t pid;
  pid_t tgid;
  u64 start_time;
  struct sched_entity se;
  struct sched_info sched_info;
  struct bpf_local_storage* bpf_storage;
} __attribute__((preserve_access_index));

// The task iterator's context (bpf_iter__task in the kernel).
struct seq_file;
struct bpf_iter_meta {
  struct seq_file* seq;
} __attribute__((preserve_access_index));

struct bpf_iter__task {
  struct bpf_iter_meta* meta;
  struct task_struct* task;
} __attribute__((preserve_access_index));

#define PF_EXITING 0x00000004  // do_exit() has begun: the process's memory may be gone
#define TASK_DEAD 0x00000080   // a sched_switch's prev_state: the process's last switch

struct linux_binprm;
