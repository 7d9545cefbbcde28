// The dashboard in a real browser: headless Chromium from Debian's packages, driven by
// playwright-core (which downloads no browser), and what the browser suites check on every page:
// a keyboard-only walk (every stop a real control with a visible focus ring, the navigation in
// order), no console error, a screenshot, and (on a phone-sized window) no horizontal scroll.
import type { Test } from 'tap'
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { chromium, type BrowserContext, type Page } from 'playwright-core'

export const CHROMIUM = '/usr/bin/chromium'

/** The dashboard's navigation, in order. */
export const NAV = ['Notes', 'API keys', 'Plan and credits', 'Integrations', 'Voice consent', 'AI clients']

export async function launchChromium(profileDir: string, viewport = { width: 1280, height: 900 }): Promise<BrowserContext> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium (scripts/system-deps.sh does)`)
  return chromium.launchPersistentContext(profileDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport,
    acceptDownloads: true,
  })
}

interface Stop {
  n: number
  tag: string
  role: string | null
  type: string | null
  label: string
  focusRing: boolean
  native: boolean
}

/** A page of the dashboard under test, with the checks every page gets. */
export class BrowserPage {
  readonly consoleErrors: string[] = []

  /** `shots`: where screenshots go; `base`: the service's origin (console errors of other sites do not count). */
  constructor(
    readonly page: Page,
    readonly base: string,
    readonly shots: string,
  ) {
    mkdirSync(shots, { recursive: true })
    page.on('console', (m) => {
      if (m.type() === 'error' && (m.location().url.startsWith(base) || !m.location().url)) this.consoleErrors.push(`${m.text()} (${m.location().url})`)
    })
    page.on('pageerror', (err) => this.consoleErrors.push(`uncaught: ${err.message}`))
  }

  /** Sequential focus navigation starts at the top of the document. */
  async focusTop() {
    await this.page.evaluate(() => {
      document.body.tabIndex = -1
      document.body.focus()
      document.body.removeAttribute('tabindex')
      window.scrollTo(0, 0)
    })
  }

  /** Tabs through the whole page from the top, as a keyboard-only user; returns every stop. */
  async tabStops(max = 120): Promise<Stop[]> {
    await this.focusTop()
    const stops: Stop[] = []
    for (let i = 0; i < max; i++) {
      await this.page.keyboard.press('Tab')
      const stop = await this.page.evaluate(() => {
        const el = document.activeElement as HTMLElement | null
        if (!el || el === document.body || el === document.documentElement) return null
        const w = window as unknown as { __ids?: WeakMap<Element, number>; __next?: number }
        w.__ids ??= new WeakMap()
        if (!w.__ids.has(el)) w.__ids.set(el, (w.__next = (w.__next ?? 0) + 1))
        const cs = getComputedStyle(el)
        const labelFor = el.id ? document.querySelector(`label[for="${CSS.escape(el.id)}"]`)?.textContent : null
        const label = (el.getAttribute('aria-label') ?? labelFor ?? (el as HTMLInputElement).labels?.[0]?.textContent ?? el.textContent ?? '').trim().replace(/\s+/g, ' ')
        const tag = el.tagName.toLowerCase()
        const native = ['a', 'button', 'input', 'select', 'textarea', 'summary', 'audio'].includes(tag) && (tag !== 'a' || el.hasAttribute('href'))
        return { n: w.__ids.get(el)!, tag, role: el.getAttribute('role'), type: el.getAttribute('type'), label: label.slice(0, 80), focusRing: cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) >= 2, native }
      })
      if (!stop) {
        if (stops.length > 0) break
        continue
      }
      if (stops.length > 0 && stop.n === stops[0]!.n) break
      // The audio element's own controls are several stops on one element.
      if (stops.at(-1)?.n === stop.n && stop.tag === 'audio') continue
      stops.push(stop)
    }
    return stops
  }

  /**
   * The page works from the keyboard: a visible focus ring on every stop, only real controls,
   * every control labelled, the shell in order, and the page's own controls reachable. `shell`:
   * the stops the header and navigation make (false: a page outside the dashboard's shell).
   */
  async keyboardCheck(t: Test, name: string, mustReach: (string | RegExp)[], o: { shell?: string[] | false } = {}) {
    const stops = await this.tabStops()
    t.ok(stops.length > 0, `${name}: the keyboard reaches controls`)
    t.same(stops.filter((x) => !x.native), [], `${name}: every stop is a link, button or form control (no clickable div)`)
    t.same(stops.filter((x) => !x.focusRing && x.tag !== 'audio'), [], `${name}: every stop shows a focus ring`)
    t.same(stops.filter((x) => x.label === ''), [], `${name}: every stop has a label`)
    const shell = o.shell ?? ['Skip to content', 'Sign out', ...NAV]
    if (shell !== false) t.same(stops.slice(0, shell.length).map((x) => x.label), shell, `${name}: the skip link, the header and the navigation first, in order`)
    for (const want of mustReach) t.ok(stops.some((x) => (typeof want === 'string' ? x.label === want : want.test(x.label))), `${name}: reaches ${want}`)
    return stops
  }

  /** Screenshot (`<shots>/<name>.png`), no console error since the last check, and no horizontal scroll. */
  async pageDone(t: Test, name: string) {
    const { width, scroll } = await this.page.evaluate(() => ({ width: window.innerWidth, scroll: document.documentElement.scrollWidth }))
    t.ok(scroll <= width, `${name}: no horizontal scroll (${scroll} px wide in a ${width} px window)`)
    await this.page.screenshot({ path: join(this.shots, `${name}.png`), fullPage: true })
    t.same(this.consoleErrors.splice(0), [], `${name}: no console error`)
  }

  /** Tabs (forward) until the control named `label` has focus. */
  async tabTo(label: string | RegExp, max = 120) {
    for (let i = 0; i < max; i++) {
      await this.page.keyboard.press('Tab')
      const now = await this.page.evaluate(() => {
        const el = document.activeElement as HTMLElement | null
        if (!el || el === document.body) return null
        const labelFor = el.id ? document.querySelector(`label[for="${CSS.escape(el.id)}"]`)?.textContent : null
        return (el.getAttribute('aria-label') ?? labelFor ?? (el as HTMLInputElement).labels?.[0]?.textContent ?? el.textContent ?? '').trim().replace(/\s+/g, ' ')
      })
      if (now !== null && (typeof label === 'string' ? now === label : label.test(now))) return
    }
    throw new Error(`no control ${label} reachable with Tab`)
  }

  /** Goes to a dashboard page with the keyboard only: Tab to its link in the navigation, Enter (opening the Menu first on a phone). */
  async openByKeyboard(label: string) {
    await this.focusTop()
    const menu = this.page.locator('button.menu-button')
    if (await menu.isVisible()) {
      await this.tabTo('Menu', 4)
      if ((await menu.getAttribute('aria-expanded')) !== 'true') await this.page.keyboard.press('Enter')
    }
    for (let i = 0; i < 14; i++) {
      await this.page.keyboard.press('Tab')
      const text = await this.page.evaluate(() => (document.activeElement?.closest('nav') ? document.activeElement.textContent?.trim() : null))
      if (text === label) {
        await this.page.keyboard.press('Enter')
        await this.page.waitForFunction((l) => document.activeElement?.id === 'page-title' && document.activeElement.textContent?.includes(l), label)
        return
      }
    }
    throw new Error(`the navigation link ${label} is not reachable with Tab`)
  }

  text(selector: string) {
    return this.page.locator(selector).innerText()
  }
}
