// Processes a test started, seen from outside.

/** Whether a process with this pid still exists (a child not yet reaped counts). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
