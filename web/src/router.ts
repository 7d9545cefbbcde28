// A small client-side router over the History API: real links (/app/...), so every page has an
// address, opens in a new tab, and works with the keyboard like any link.
import { useEffect, useState } from 'preact/hooks'

export const BASE = '/app'

let listeners: (() => void)[] = []
const notify = () => listeners.forEach((l) => l())
window.addEventListener('popstate', notify)

export function navigate(to: string, o: { replace?: boolean } = {}) {
  const url = to.startsWith('/') ? to : `${BASE}/${to}`
  if (o.replace) history.replaceState(null, '', url)
  else history.pushState(null, '', url)
  notify()
}

export function useLocation(): { path: string; query: URLSearchParams } {
  const [, setTick] = useState(0)
  useEffect(() => {
    const l = () => setTick((n) => n + 1)
    listeners.push(l)
    return () => {
      listeners = listeners.filter((x) => x !== l)
    }
  }, [])
  const path = location.pathname.replace(/^\/app\/?/, '/').replace(/\/+$/, '') || '/'
  return { path, query: new URLSearchParams(location.search) }
}

/** A click that a link should handle itself (new tab, download, modified click) is left to the browser. */
export function linkClick(e: MouseEvent, to: string) {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return
  e.preventDefault()
  navigate(to)
}
