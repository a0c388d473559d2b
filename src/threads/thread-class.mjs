// The CPU priority of the calling thread (Linux; elsewhere nothing changes): its niceness
// (setpriority on the thread id applies to that thread only) and its scheduling class. Background
// threads that must give way to the serving threads at once (the trainer) run in SCHED_IDLE: at
// nice 19 alone a thread still ran out its time slice when a serving thread woke, and requests
// waited behind it (p99 at 4 connections beside a model rebuild, 100,000 items on one core: 1.77
// ms at nice 19, 0.99-1.19 ms in SCHED_IDLE, 1.08 ms without a rebuild). Node has no call for the
// class; util-linux's chrt sets it on the thread id. Without chrt nothing changes; without the
// right to leave the class again (mayLeaveIdleClass) the thread does not enter it.
import { spawnSync } from 'node:child_process';
import { readFileSync, readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

const SCHED_IDLE = 5;
/** Bit of CAP_SYS_NICE in /proc/<pid>/status's CapEff. */
const CAP_SYS_NICE = 23n;

const threadId = () => Number(readlinkSync('/proc/thread-self').split('/').pop());

/** Lowers the calling thread's priority to `nice` (0..19); false where it could not. */
export function setThreadNiceness(nice) {
  try {
    setPriority(threadId(), nice);
    return true;
  } catch {
    return false;
  }
}

/** Puts the calling thread in SCHED_IDLE ('idle') or the normal class ('other'); false when it could not. */
export function setSchedulingClass(policy) {
  try {
    return spawnSync('chrt', [`--${policy}`, '--pid', '0', String(threadId())], { stdio: 'ignore', timeout: 5000 }).status === 0;
  } catch {
    return false;
  }
}

/**
 * Whether a thread at `nice` may leave SCHED_IDLE again, from /proc/self/status and
 * /proc/self/limits: Linux lets it back into the normal class only with CAP_SYS_NICE or an
 * RLIMIT_NICE of at least 20 - nice (the default limit, 0, permits no nice value). Without
 * that, a trainer in SCHED_IDLE would hold its write locks in SCHED_IDLE too.
 */
export function mayLeaveIdleClass(status, limits, nice) {
  const caps = /^CapEff:\s*([0-9a-f]+)/im.exec(status);
  if (caps && (BigInt(`0x${caps[1]}`) >> CAP_SYS_NICE) & 1n) return true;
  const limit = /^Max nice priority\s+(\S+)/im.exec(limits)?.[1];
  return limit === 'unlimited' || Number(limit) >= 20 - nice;
}

/** Puts the calling thread at `nice` in SCHED_IDLE when it may leave it again to write; false when it did not. */
export function enterIdleClass(nice) {
  try {
    if (!mayLeaveIdleClass(readFileSync('/proc/self/status', 'utf8'), readFileSync('/proc/self/limits', 'utf8'), nice)) return false;
  } catch {
    return false;
  }
  return setSchedulingClass('idle');
}

function inIdleClass() {
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'utf8');
    // Field 41 is the policy; the fields after comm (which may hold spaces) start at the last ')'.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[38]) === SCHED_IDLE;
  } catch {
    return false;
  }
}

/**
 * Runs `write` in the normal class when the thread is in SCHED_IDLE, then puts it back: an
 * idle-class thread holding an LMDB write lock may get no CPU for as long as the serving threads
 * keep the core busy, and every other writer of that environment (the model builder) would wait
 * for it. Its niceness stays.
 */
export function writingAtNormalClass(write) {
  const idle = inIdleClass();
  if (idle) setSchedulingClass('other');
  try {
    return write();
  } finally {
    if (idle) setSchedulingClass('idle');
  }
}
