// The web app a person lives in (issue 29, "Done when"), in headless Chromium at 1280 px and at
// 390 px: sign in, add a recording from the browser (the presigned flow, with the upload's real
// progress bar under a throttled network; a file picked at 1280, dropped at 390), watch it
// progress to ready without a reload, read and correct the transcript (a suggested speaker name
// marked as one and accepted, a rename inline, find and replace), translate and see the
// translation go stale after the correction, generate and read an analysis and follow its anchor
// into the transcript, generate chapters, ask and jump to the cited second, generate and download
// a deliverable and an export, edit the note's details, and find the note again by search, tag
// and folder. Also: an import from a link, a failed import explained by its errorCode, an unknown
// note id, a 402 that says how many credits are missing, the credits page's paged ledger and its
// chart of one day. On every page: no horizontal scroll (at 390 px too), a keyboard walk, no
// console error, and a screenshot in .ci/screenshots/webapp/<width>/<name>.png.
//
// Speech: espeak-ng WAV (test/support/speech.ts) transcribed by the OpenAI-compatible test server
// (test/support/pipeline.ts startAsrServer, which measures the speech intervals of what it is
// sent): the local Whisper engine would take most of the suite's time on a loaded 2-core machine.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { randomUUID } from 'node:crypto'
import type { Page } from 'playwright-core'
import { mcpTestService } from './support/mcp.ts'
import { tempDir } from './support/tmp.ts'
import { startHttpServer } from './support/httpServer.ts'
import { startAsrServer } from './support/pipeline.ts'
import { speech } from './support/speech.ts'
import { PASSWORD } from './support/dashboard.ts'
import { BrowserPage, NAV, launchChromium } from './support/browser.ts'
import { pollUntil } from './support/pollUntil.ts'
import { buildWeb } from '../scripts/build-web.ts'
import { PRICES } from '../domain/credits/prices.ts'

const SHOTS = resolve('.ci/screenshots/webapp')
await buildWeb()

// Two people talking; the first introduces herself (a suggested name), the second is addressed.
const SCRIPT = [
  { text: 'Good morning, my name is Maria and welcome to the weekly planning meeting.', voice: 'en+f3', speaker: 'spk_0' },
  { text: 'Thank you. The budget review is finished and the numbers look good.', voice: 'en+m3', speaker: 'spk_1' },
  { text: 'Great, then we can ship the release on Friday.', voice: 'en+f3', speaker: 'spk_0' },
]

const tmp = tempDir('webapp-browser-')
t.teardown(tmp.remove)
const wavPath = await speech(tmp.dir, 'planning', SCRIPT, { format: 'wav' })
const wav = await readFile(wavPath)
const mp3 = await readFile(await speech(tmp.dir, 'planning-mp3', SCRIPT))
const asr = await startAsrServer(tmp.dir, SCRIPT)
t.teardown(asr.close)
const outside = await startHttpServer({
  '/talk.mp3': { body: mp3, headers: { 'content-type': 'audio/mpeg' } },
  '/gone.mp3': { status: 404, body: 'no such file' },
})
t.teardown(outside.close)

const s = await mcpTestService({
  workers: true,
  env: { ASR_BASE_URL: asr.baseUrl, IMPORT_ALLOW_HOSTS: '127.0.0.1', JOB_POLL_MS: '20', JOB_PROGRESS_INTERVAL_MS: '20', TRANSLATION_POLL_MS: '50', TRANSLATION_ENGINE: 'apertium' },
})
t.teardown(s.close)
const base = s.base
// The personal plan's 1000 credits pay for both walks; what is left cannot pay a last deliverable.
const account = await s.account('personal')
const email = 'robin@example.com'
await s.services.persons.register({ accountId: account.accountId, email, password: PASSWORD, name: 'Robin Example' })

const browser = await launchChromium(join(tmp.dir, 'chromium-profile'))
t.teardown(() => browser.close())
const page: Page = browser.pages()[0] ?? (await browser.newPage())
page.setDefaultTimeout(30_000)
const cdp = await browser.newCDPSession(page)
await cdp.send('Network.enable')
const throttleUploads = (bytesPerSecond: number | null) =>
  cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: bytesPerSecond ?? -1 })

let b = new BrowserPage(page, base, join(SHOTS, '1280'))
const creditsLeft = async () => (await s.services.status.status({ accountId: account.accountId })).credits.left
const playerAt = () => page.$eval('#player', (a) => (a as HTMLAudioElement).currentTime)
/** The shell's first keyboard stops at this width: on a phone the navigation folds behind Menu. */
const shellStops = (width: number) => (width < 800 ? ['Skip to content', 'Menu', 'Sign out'] : ['Skip to content', 'Sign out', ...NAV])

/** A refusal the page asked for on purpose: Chromium logs every 4xx fetch; only that line is dropped. */
function expectConsole(line: RegExp) {
  const i = b.consoleErrors.findIndex((e) => line.test(e))
  if (i >= 0) b.consoleErrors.splice(i, 1)
}

async function openTab(label: string) {
  await page.getByRole('tab', { name: label }).click()
  await page.waitForSelector(`[role=tab][aria-selected=true]:text-is("${label}")`)
}

/** Downloads what a click on `link` fetches and returns its bytes as text. */
async function download(link: ReturnType<Page['locator']>) {
  const [file] = await Promise.all([page.waitForEvent('download'), link.click()])
  return { name: file.suggestedFilename(), text: readFileSync((await file.path())!, 'utf8') }
}

t.test('sign in with the keyboard; an account without notes says so', async (t) => {
  await page.goto(`${base}/app/notes`)
  await page.waitForSelector('#email')
  await b.keyboardCheck(t, 'sign-in', ['Email', 'Password', 'Sign in'], { shell: false })
  await b.pageDone(t, 'sign-in')
  await b.focusTop()
  await b.tabTo('Email')
  await page.keyboard.type(email)
  await page.keyboard.press('Tab')
  await page.keyboard.type(PASSWORD)
  await page.keyboard.press('Enter')
  await page.waitForSelector('#notes-empty')
  t.equal(new URL(page.url()).pathname, '/app/notes', 'back where the sign-in was asked for')
  t.match(await b.text('#notes-empty'), /No notes yet/)
  await b.keyboardCheck(t, 'notes-empty', ['Upload audio or video', 'Or import a link', 'Search', 'Status', 'Folder', 'Tags', 'Created since', 'New folder'])
  await b.pageDone(t, 'notes-empty')
})

t.test('a note id that is not there: a clear page, no endless loading', async (t) => {
  await page.goto(`${base}/app/notes/${randomUUID()}`)
  await page.waitForSelector('#not-found')
  t.equal(await b.text('h1'), 'Note not found')
  t.equal(await page.locator('.loading').count(), 0, 'no "Loading…" left')
  await page.goto(`${base}/app/notes/not-a-note`)
  await page.waitForSelector('#not-found')
  t.equal(await b.text('h1'), 'Not found')
  expectConsole(/status of 404 .*\/app\/api\/notes\//)
  await b.pageDone(t, 'note-not-found')
})

for (const width of [1280, 390]) {
  t.test(`the walk at ${width} px`, async (t) => {
    await page.setViewportSize({ width, height: width < 800 ? 844 : 900 })
    b = new BrowserPage(page, base, join(SHOTS, String(width)))
    const phone = width < 800
    const folder = `Clients ${width}`
    const tag = `q3-${width}`
    let noteId = ''

    await t.test('notes: a folder, then a recording added from the browser, its upload progress and its stages until ready', async (t) => {
      await page.goto(`${base}/app/notes`)
      await page.locator('#new-folder').fill(folder)
      await page.getByRole('button', { name: 'Make folder' }).click()
      await page.getByRole('link', { name: folder }).waitFor()

      const hold = asr.holdRequests()
      // A slow uplink, so the bar is seen between empty and full.
      await throttleUploads(64 * 1024)
      if (!phone) {
        await page.locator('#new-title').fill(`Weekly planning ${width}`)
        await page.locator('#file').setInputFiles({ name: 'planning.wav', mimeType: 'audio/wav', buffer: wav })
      } else {
        await page.locator('#new-title').fill(`Weekly planning ${width}`)
        // Dropped on the drop zone, as a file dragged from the desktop.
        const data = await page.evaluateHandle((b64) => {
          const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))
          const dt = new DataTransfer()
          dt.items.add(new File([bytes], 'planning.wav', { type: 'audio/wav' }))
          return dt
        }, wav.toString('base64'))
        await page.dispatchEvent('.dropzone', 'drop', { dataTransfer: data })
      }
      const partial = await page.waitForFunction(() => {
        const bar = document.querySelector<HTMLProgressElement>('progress.upload-progress')
        return bar && bar.value > 0 && bar.value < bar.max ? bar.value / bar.max : null
      })
      t.ok((await partial.jsonValue())! > 0, `the upload bar moved with the bytes sent (${Math.round((await partial.jsonValue())! * 100)}% seen)`)
      t.match(await b.text('.job'), /uploading \d+(\.\d)? KiB of \d+ KiB \(\d+%\)/, 'in bytes and percent')
      await b.pageDone(t, 'add-uploading')
      await throttleUploads(null)
      await hold.seen
      const job = page.locator('.job').first()
      await page.waitForFunction(() => document.querySelector('.job')?.textContent?.includes('transcribing'))
      noteId = (await job.getAttribute('data-job-note'))!
      t.match(noteId, /^[0-9a-f-]{36}$/)
      t.match(await job.innerText(), /processing\s+transcribing/, 'the note’s stage while it is transcribed')
      await page.waitForSelector(`tr[data-note-id="${noteId}"][data-status="processing"]`)
      await b.pageDone(t, 'add-processing')
      hold.release()
      await page.waitForSelector(`.job[data-phase="ready"]`, { timeout: 60_000 })
      await page.waitForSelector(`tr[data-note-id="${noteId}"][data-status="ready"]`)
      t.pass('ready, in the add panel and the list, without a reload')
      await b.keyboardCheck(t, 'notes', [`Weekly planning ${width}`, 'Search', `Rename ${folder}`], { shell: shellStops(width) })
      await b.pageDone(t, 'notes-ready')
    })

    // Before the paid steps: an import holds 50 credits until its duration is known.
    if (!phone) {
      await t.test('an import from a link shows its progress until ready', async (t) => {
        await page.goto(`${base}/app/notes`)
        await page.locator('#link').fill(outside.url('/talk.mp3'))
        await page.getByRole('button', { name: 'Import' }).click()
        await page.waitForSelector('.job[data-phase="ready"]', { timeout: 60_000 })
        t.pass('imported and transcribed')
      })
    } else {
      await t.test('a failed import says what its errorCode means and what to do next', async (t) => {
        await page.goto(`${base}/app/notes`)
        await page.locator('#link').fill(outside.url('/gone.mp3'))
        await page.getByRole('button', { name: 'Import' }).click()
        const failed = page.locator('.job[data-phase="failed"]')
        await failed.waitFor({ timeout: 60_000 })
        const text = await failed.innerText()
        t.match(text, /failed: source_not_found/)
        t.match(text, /The link answered 404\/410 or similar: nothing to import\./, 'the sentence of the shared table')
        t.match(text, /import it again or try another source/, 'and the next step MCP gives too')
        t.notMatch(text, /retention window/, 'not the no-audio sentence')
        const id = (await failed.getAttribute('data-job-note'))!
        await failed.getByRole('link').click()
        await page.waitForSelector('#note-status .badge.bad')
        t.match(await b.text('#note-status'), /source_not_found[\s\S]*nothing to import/)
        t.match(await b.text('#no-audio'), /failed before any was kept/)
        t.equal(new URL(page.url()).pathname, `/app/notes/${id}`)
        await b.pageDone(t, 'note-failed-import')
      })
    }

    await t.test('the note: its length as the player says, a line plays from where it starts and is highlighted', async (t) => {
      await page.goto(`${base}/app/notes/${noteId}`)
      await page.waitForSelector('button.segment')
      await page.waitForFunction(() => {
        const a = document.querySelector<HTMLAudioElement>('#player')
        return !!a && a.readyState >= 1 && Number.isFinite(a.duration)
      })
      const length = await b.text('#note-length')
      t.equal((await b.text('#player-time')).split(' / ')[1], length, `the player shows the note’s length (${length})`)
      const seconds = await page.$eval('#player', (a) => (a as HTMLAudioElement).duration)
      t.equal(length, `0:${String(Math.round(seconds)).padStart(2, '0')}`, `the audio lasts ${seconds} s: the length is its whole seconds`)
      const third = page.locator('button.segment').nth(2)
      const start = Number(await third.getAttribute('data-start-ms'))
      await third.click()
      await pollUntil('the player at the third line', async () => Math.abs((await playerAt()) - start / 1000) < 0.5, 10_000)
      await page.waitForSelector('.segments li.current button[data-sequence="2"]')
      t.pass('the line being played is highlighted')
      await page.$eval('#player', (a) => (a as HTMLAudioElement).pause())
      await b.keyboardCheck(t, 'note-transcript', ['← All notes', 'Play', 'Position', 'Speed', 'Transcript', 'Suggest names', /Good morning/], { shell: shellStops(width) })
      await b.pageDone(t, 'note-transcript')
    })

    await t.test('speakers: a suggested name is marked as one; accepted, it is confirmed; another is renamed inline', async (t) => {
      await page.getByRole('button', { name: 'Suggest names' }).click()
      const maria = page.locator('.speaker', { has: page.locator('.suggestion', { hasText: 'Maria' }) })
      await maria.locator('.badge.suggested').waitFor()
      t.equal(await maria.getAttribute('data-name-status'), 'suggested')
      t.match(await page.locator('button.segment').first().innerText(), /Maria\?/, 'a line shows the suggested name with a question mark')
      t.ok(await page.locator('button.segment .who.suggested').first().isVisible(), 'and marks it')
      await b.pageDone(t, 'note-speakers-suggested')
      await maria.getByRole('button', { name: /^Accept Maria/ }).click()
      await page.waitForSelector('.speaker[data-name-status="confirmed"]')
      t.match(await page.locator('button.segment').first().innerText(), /Maria\s/, 'accepted: the name without a question mark')
      t.equal(await page.locator('button.segment').first().locator('.who.suggested').count(), 0)
      const other = page.locator('.speaker[data-name-status="none"], .speaker[data-name-status="suggested"]').first()
      await other.getByRole('button', { name: /^Rename/ }).click()
      await page.waitForFunction(() => document.activeElement?.id.startsWith('name-'))
      await page.keyboard.press('Control+A')
      await page.keyboard.type('Tom Jones')
      await page.keyboard.press('Enter')
      await page.locator('.speaker[data-name-status="confirmed"] .speaker-name', { hasText: 'Tom Jones' }).waitFor()
      t.match(await page.locator('button.segment').nth(1).innerText(), /Tom Jones/, 'the lines follow the rename')
      const api = await s.services.queries.transcripts.speakers(account.accountId, noteId)
      t.same(
        api.speakers.map((x) => [x.name, x.nameStatus]).sort(),
        [['Maria', 'confirmed'], ['Tom Jones', 'confirmed']],
        'the API says the same',
      )
      await b.pageDone(t, 'note-speakers')
    })

    await t.test('a line heard as the wrong voice is given to the right speaker, or to a new one, from the menu beside it', async (t) => {
      const menu = () => page.getByRole('combobox', { name: /^Who said the line at / }).nth(1)
      const line = () => page.locator('button.segment').nth(1).innerText()
      t.equal(await menu().inputValue(), 'B', 'the second line is B’s')
      await menu().selectOption({ label: 'Maria' })
      await pollUntil('the line given to Maria', async () => /Maria/.test(await line()), 10_000)
      const after = await s.services.queries.transcripts.speakers(account.accountId, noteId)
      t.same(after.speakers.map((x) => [x.name, x.segmentCount]), [['Maria', 3]], 'her talk time counts it; Tom Jones has no line left')
      await menu().selectOption({ label: 'New speaker' })
      await pollUntil('the line given to a new speaker', async () => /Speaker C/.test(await line()), 10_000)
      t.pass('a new speaker is C: B had a name, which must not come back on someone else')
      await b.pageDone(t, 'note-line-speaker')
      await page.getByRole('combobox', { name: 'Merge Speaker C into another speaker' }).selectOption({ label: 'Maria' })
      await page.getByText('Speaker C merged into Maria: every line is theirs now.').waitFor()
      await pollUntil('every line Maria’s', async () => (await page.locator('button.segment .who').allInnerTexts()).every((x) => x === 'Maria'), 10_000)
      t.equal(await page.locator('.speaker').count(), 1, 'one speaker left')
      t.equal(await page.getByRole('combobox', { name: /^Merge / }).count(), 0, 'nobody left to merge into')
      await page.getByRole('button', { name: 'Undo the merge' }).click()
      await page.getByText('Merge undone: the lines are back with their speaker.').waitFor()
      await pollUntil('the line back with Speaker C', async () => /Speaker C/.test(await line()), 10_000)
      t.equal(await page.locator('.speaker').count(), 2, 'two speakers again')
      await page.getByRole('combobox', { name: 'Merge Speaker C into another speaker' }).selectOption({ label: 'Maria' })
      await pollUntil('merged again', async () => (await page.locator('button.segment .who').allInnerTexts()).every((x) => x === 'Maria'), 10_000)
      await menu().selectOption({ label: 'New speaker' })
      await pollUntil('the line given to a new speaker again', async () => /Speaker C/.test(await line()), 10_000)
      // As it was, for the steps after this one.
      await page.locator('.speaker[data-label="C"]').getByRole('button', { name: /^Rename/ }).click()
      await page.waitForFunction(() => document.activeElement?.id.startsWith('name-'))
      await page.keyboard.press('Control+A')
      await page.keyboard.type('Tom Jones')
      await page.keyboard.press('Enter')
      await pollUntil('the line named Tom Jones', async () => /Tom Jones/.test(await line()), 10_000)
    })

    await t.test('translation: requested, progressing, read beside the original', async (t) => {
      await openTab('Translation')
      await page.locator('#language').selectOption('es')
      await page.getByRole('button', { name: 'Translate' }).click()
      await page.waitForSelector('#translation-status[data-status="ready"]', { timeout: 60_000 })
      const first = await page.locator('#translation tbody tr').first().innerText()
      t.match(first, /Good morning[\s\S]*(Bueno|buen|mañana|nombre)/i, `the line and its Spanish: ${first.replace(/\s+/g, ' ')}`)
      await b.pageDone(t, 'note-translation')
    })

    await t.test('correcting the transcript makes the translation stale, marked; translating again completes it', async (t) => {
      await openTab('Transcript')
      await page.locator('.find-replace summary').click()
      await page.locator('#find').fill('Friday')
      await page.locator('#replace').fill('Monday')
      await page.getByRole('button', { name: 'Replace everywhere' }).click()
      await page.getByText(/1 replaced in 1 line\(s\)\. Translations to redo: es\./).waitFor()
      await page.waitForFunction(() => document.querySelectorAll('button.segment')[2]?.textContent?.includes('Monday'))
      t.pass('the line reads the correction')
      await openTab('Translation')
      await page.locator('#translation-stale').waitFor()
      t.equal(await page.locator('#translation tr.stale').count(), 1, 'the changed line is marked stale')
      await b.pageDone(t, 'note-translation-stale')
      await page.getByRole('button', { name: 'Translate the changed lines' }).click()
      await page.waitForSelector('#translation-status[data-status="ready"][data-stale="false"]', { timeout: 60_000 })
      t.equal(await page.locator('#translation-stale').count(), 0, 'complete again')
    })

    await t.test('an analysis: its price first, then its lists; an anchor opens the transcript at that line', async (t) => {
      await openTab('Analyses')
      t.match(await b.text('#analysis-cost'), new RegExp(`${PRICES.analysis.credits} credits per template; \\d+ left`), 'the price before pressing')
      const before = await creditsLeft()
      await page.getByRole('button', { name: 'Generate analysis' }).click()
      const analysis = page.locator('article.analysis[data-template="generic"]')
      await analysis.waitFor({ timeout: 60_000 })
      t.equal(await creditsLeft(), before - PRICES.analysis.credits, 'charged as shown')
      t.ok((await analysis.locator('.summary').innerText()).length > 10, 'a summary')
      t.ok((await analysis.locator('li').count()) > 0, 'its lists')
      const anchor = analysis.locator('a.anchor').last()
      const href = new URL((await anchor.getAttribute('href'))!, base)
      const ms = Number(href.searchParams.get('t'))
      await b.keyboardCheck(t, 'note-analysis', ['Template', 'Generate analysis', /^\d+:\d\d$/], { shell: shellStops(width) })
      await b.pageDone(t, 'note-analysis')
      await anchor.click()
      await page.waitForSelector('[role=tab][aria-selected=true]:text-is("Transcript")')
      await page.waitForSelector('.segments li.focused')
      t.equal(new URL(page.url()).searchParams.get('t'), String(ms), 'the address names the moment')
      await pollUntil('the player at the anchor', async () => Math.abs((await playerAt()) - ms / 1000) < 0.5, 10_000)
      t.pass(`the player is at the anchor (${ms} ms)`)
    })

    await t.test('the outline: chapters generated for their price, each a link into the transcript', async (t) => {
      await openTab('Outline')
      t.match(await b.text('#outline-cost'), new RegExp(`${PRICES.outline.credits} credits`))
      await page.getByRole('button', { name: 'Generate chapters' }).click()
      await page.waitForSelector('#chapters li a.anchor', { timeout: 60_000 })
      t.ok((await page.locator('#chapters li').count()) >= 1)
      await b.pageDone(t, 'note-outline')
    })

    await t.test('ask: the answer’s citation plays the cited second', async (t) => {
      await openTab('Ask')
      t.match(await b.text('#ask-cost'), new RegExp(`${PRICES.askNote.credits} credits per question`))
      await page.locator('#question').fill('When do we ship the release?')
      await page.getByRole('button', { name: 'Ask', exact: true }).click()
      const cite = page.locator('.answer-text button.cite').first()
      await cite.waitFor({ timeout: 60_000 })
      const ms = Number(await cite.getAttribute('data-ms'))
      await cite.click()
      await pollUntil('the player at the cited second', async () => Math.abs((await playerAt()) - ms / 1000) < 0.5, 10_000)
      t.pass(`the player jumped to ${ms / 1000} s`)
      await page.$eval('#player', (a) => (a as HTMLAudioElement).pause())
      t.ok((await page.locator('.cited li').count()) >= 1, 'the cited lines are listed')
      await b.pageDone(t, 'note-ask')
    })

    await t.test('a deliverable: generated for its price, downloaded as a file', async (t) => {
      await openTab('Deliverables')
      t.match(await b.text('#deliverable-cost'), new RegExp(`${PRICES.deliverable.credits} credits`))
      await page.locator('#kind').selectOption('email')
      await page.locator('#deliverable-template').selectOption('follow_up')
      await page.getByRole('button', { name: 'Generate' }).click()
      const link = page.locator('#deliverables a.button').first()
      await link.waitFor({ timeout: 60_000 })
      const file = await download(link)
      t.match(file.name, /\.eml$/)
      t.match(file.text, /^Subject: /m, 'an email file')
      await b.pageDone(t, 'note-deliverables')
    })

    await t.test('an export: the price on the link, the file in the format', async (t) => {
      await openTab('Export')
      t.match(await b.text('#export-cost'), /1 credit/)
      const before = await creditsLeft()
      const file = await download(page.getByRole('link', { name: 'Download .srt' }))
      t.match(file.text, /^1\r?\n00:00:\d\d,\d{3} --> /, 'SubRip')
      t.match(file.text, /Maria: Good morning/, 'with the confirmed name')
      t.equal(await creditsLeft(), before - 1, 'one transcript read')
      await b.pageDone(t, 'note-export')
    })

    await t.test('details: description, tags and folder saved', async (t) => {
      await openTab('Details')
      await page.locator('#description').fill('Planning for the Monday release.')
      await page.locator('#tags').fill(`planning, ${tag}`)
      await page.locator('#note-folder').selectOption({ label: folder })
      await page.getByRole('button', { name: 'Save details' }).click()
      await page.getByText('Saved.').waitFor()
      const note = await s.services.queries.notes.detail(account.accountId, noteId, undefined)
      t.match(note, { description: 'Planning for the Monday release.', tags: ['planning', tag] })
      t.ok(note.folderId, 'in the folder')
      await b.keyboardCheck(t, 'note-details', ['Title', 'Description', 'Tags', 'Folder', 'Save details', 'Delete note'], { shell: shellStops(width) })
      await b.pageDone(t, 'note-details')
    })

    await t.test('next week: found again by a word of the transcript, by tag and by folder', async (t) => {
      if (phone) {
        await page.getByRole('button', { name: 'Menu' }).click()
        t.ok(await page.locator('#nav').isVisible(), 'the navigation unfolds')
        await page.locator('#nav').getByRole('link', { name: 'Notes' }).click()
        await page.waitForFunction(() => document.activeElement?.id === 'page-title')
        t.notOk(await page.locator('#nav').isVisible(), 'and folds again once a page is chosen')
      } else await b.openByKeyboard('Notes')
      await page.locator('#q').fill('budget review')
      await page.locator('#tag').fill(tag)
      await page.keyboard.press('Enter')
      await page.waitForFunction((id) => document.querySelectorAll('#notes tbody tr').length === 1 && !!document.querySelector(`tr[data-note-id="${id}"]`), noteId)
      t.match(new URL(page.url()).search, new RegExp(`q=budget\\+review&tag=${tag}`), 'the search is in the address')
      await page.reload()
      await page.waitForSelector(`tr[data-note-id="${noteId}"]`)
      t.equal(await page.locator('#q').inputValue(), 'budget review', 'and survives a reload (a bookmark finds it next week)')
      await b.pageDone(t, 'notes-search')
      await page.getByRole('button', { name: 'Clear' }).click()
      await page.getByRole('link', { name: folder }).click()
      await page.waitForFunction((id) => document.querySelectorAll('#notes tbody tr').length === 1 && !!document.querySelector(`tr[data-note-id="${id}"]`), noteId)
      t.pass('the folder holds it')
    })

    await t.test('every other page fits the window', async (t) => {
      for (const [path, name, ready] of [
        ['keys', 'keys', '#key-name'],
        ['integrations', 'integrations', 'h1'],
        ['voice', 'voice', '#consent-status'],
        ['clients', 'clients', 'h1'],
      ] as const) {
        await page.goto(`${base}/app/${path}`)
        await page.waitForSelector(ready)
        await page.waitForFunction(() => !document.querySelector('.loading'))
        await b.pageDone(t, name)
      }
    })
  })
}

t.test('a paid action the balance cannot pay: the 402 says how many credits are missing', async (t) => {
  await page.setViewportSize({ width: 390, height: 844 })
  const left = await creditsLeft()
  t.ok(left < PRICES.deliverable.credits, `${left} credits left`)
  await page.goto(`${base}/app/notes?q=planning`)
  await page.locator('#notes tbody tr a').first().click()
  await openTab('Deliverables')
  await page.getByRole('button', { name: 'Generate' }).click()
  const alert = page.locator('[role=alert][data-code="insufficient_credits"]')
  await alert.waitFor()
  t.match(await alert.innerText(), new RegExp(`needs ${PRICES.deliverable.credits} credits and ${left} are left[\\s\\S]*${PRICES.deliverable.credits - left} credits missing\\.`))
  t.match(await alert.innerText(), /Wait for the next cycle/, 'and what to do next')
  expectConsole(/status of 402 .*\/deliverables/)
  await b.pageDone(t, 'note-402')
})

t.test('credits: the ledger a page at a time, a chart of one day that reads, the auditor’s verdict', async (t) => {
  // More lines than a page: transcript reads at their price, as the REST API charges them.
  for (let i = 0; i < 12; i++) await s.services.credits.charge(account.accountId, { operation: PRICES.transcriptRead.operation, cost: PRICES.transcriptRead.credits })
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: width < 800 ? 844 : 900 })
    b = new BrowserPage(page, base, join(SHOTS, String(width)))
    await page.goto(`${base}/app/credits`)
    await page.getByText(/OK: replaying the \d+ ledger events/).waitFor()
    const caption = await b.text('#ledger caption')
    const total = Number(/of (\d+)$/.exec(caption)![1])
    t.ok(total > 25, `${total} lines in the cycle`)
    t.equal(await page.locator('#ledger tbody tr').count(), 25, 'a page of 25')
    await b.keyboardCheck(t, 'credits', ['Run the audit again', 'Cycle', 'Export CSV', 'Older lines'], { shell: shellStops(width) })
    await page.getByRole('button', { name: 'Older lines' }).click()
    await page.waitForFunction(() => /lines 26–/.test(document.querySelector('#ledger caption')?.textContent ?? ''))
    t.equal(await page.locator('#ledger tbody tr').count(), Math.min(25, total - 25), 'the next page')
    // Every line happened in the last minutes: the time axis spans the lines themselves (with a
    // twentieth of margin on each side, at least a minute), so the marks spread over the plot
    // instead of standing in one strip of a month-wide axis.
    const xs = await page.$$eval('figure.chart svg .mark > :not(title)', (els) => els.map((e) => e.getBoundingClientRect().x + e.getBoundingClientRect().width / 2))
    const plot = (await page.$eval('figure.chart svg', (e) => e.getBoundingClientRect().width)) - 56 - 16
    t.equal(xs.length, total, 'a mark per line')
    const times = (await s.services.queries.ledger.statement(account.accountId, (await s.services.status.status({ accountId: account.accountId })).credits.cycle)).map((l) => Date.parse(l.at))
    const spanMs = Math.max(...times) - Math.min(...times)
    const expected = Math.min(1 / 1.1, spanMs / 60_000)
    const spread = (Math.max(...xs) - Math.min(...xs)) / plot
    t.ok(Math.abs(spread - expected) < 0.03, `the marks span ${Math.round(spread * 100)}% of the plot for ${Math.round(spanMs / 1000)} s of lines (${Math.round(expected * 100)}% by the rule)`)
    const ticks = await page.$$eval('.time-tick', (els) => els.map((e) => e.textContent))
    t.ok(ticks.length >= 2 && new Set(ticks).size === ticks.length, `time ticks within the day: ${ticks.join(', ')}`)
    const fontPx = await page.$eval('.time-tick', (e) => e.getBoundingClientRect().height)
    t.ok(fontPx >= 9, `the axis text is readable (${fontPx.toFixed(1)} px)`)
    await b.pageDone(t, 'credits')
  }
})

t.test('at 390 px: signing out and in again, and a note id that is not there', async (t) => {
  await page.setViewportSize({ width: 390, height: 844 })
  b = new BrowserPage(page, base, join(SHOTS, '390'))
  await page.goto(`${base}/app/notes`)
  await page.getByRole('button', { name: 'Sign out' }).click()
  await page.waitForSelector('#email')
  await b.keyboardCheck(t, 'sign-in', ['Email', 'Password', 'Sign in'], { shell: false })
  await b.pageDone(t, 'sign-in')
  await page.locator('#email').fill(email)
  await page.locator('#password').fill(PASSWORD)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForSelector('#notes tbody tr')
  await page.goto(`${base}/app/notes/${randomUUID()}`)
  await page.waitForSelector('#not-found')
  t.equal(await page.locator('.loading').count(), 0, 'no "Loading…" left')
  expectConsole(/status of 404 .*\/app\/api\/notes\//)
  await b.pageDone(t, 'note-not-found')
})
