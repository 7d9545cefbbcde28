// The dashboard: a signed-in person's view of their account. One page per area; the session
// comes from GET /app/api/session (which also hands out the CSRF token).
import { render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import './styles.css'
import { api, setCsrfToken, whenSignedOut, type Session, type SessionAnswer } from './api.ts'
import { navigate, useLocation } from './router.ts'
import { Link, Loading, NotFound } from './components.tsx'
import { SignInPage } from './pages/SignIn.tsx'
import { KeysPage } from './pages/Keys.tsx'
import { CreditsPage } from './pages/Credits.tsx'
import { NotesPage } from './pages/Notes.tsx'
import { NotePage } from './pages/Note.tsx'
import { IntegrationsPage } from './pages/Integrations.tsx'
import { VoicePage } from './pages/Voice.tsx'
import { ClientsPage } from './pages/Clients.tsx'

const NAV = [
  { to: 'notes', label: 'Notes' },
  { to: 'keys', label: 'API keys' },
  { to: 'credits', label: 'Plan and credits' },
  { to: 'integrations', label: 'Integrations' },
  { to: 'voice', label: 'Voice consent' },
  { to: 'clients', label: 'AI clients' },
] as const

function App() {
  const [session, setSession] = useState<SessionAnswer | null>(null)
  const { path, query } = useLocation()

  const refresh = async () => {
    const s = await api<SessionAnswer>('GET', '/session')
    setCsrfToken(s.csrfToken)
    setSession(s)
    return s
  }
  useEffect(() => {
    whenSignedOut(() => void refresh())
    void refresh()
  }, [])

  if (!session) return <Loading />
  if (!session.signedIn) {
    if (path !== '/sign-in') {
      const next = path === '/' ? '' : `?next=${encodeURIComponent(location.pathname + location.search)}`
      history.replaceState(null, '', `/app/sign-in${next}`)
    }
    return (
      <SignInPage
        next={query.get('next')}
        onSignedIn={(s) => {
          setCsrfToken(s.csrfToken)
          setSession(s)
        }}
      />
    )
  }
  if (path === '/sign-in' || path === '/') {
    // Signed in already: go where the sign-in was meant to lead.
    const next = query.get('next')
    if (next && /^\/(app\/|oauth\/authorize\?)/.test(next)) {
      if (next.startsWith('/oauth/')) location.assign(next)
      else navigate(next, { replace: true })
      return <Loading />
    }
    navigate('notes', { replace: true })
    return <Loading />
  }
  return <Shell session={session} path={path} onSignedOut={() => void refresh()} />
}

function Shell(p: { session: Session; path: string; onSignedOut: () => void }) {
  const { session, path } = p
  const section = path.split('/')[1] ?? ''
  // On a phone the navigation folds behind a Menu button; choosing a page folds it again.
  const [menuOpen, setMenuOpen] = useState(false)
  useEffect(() => setMenuOpen(false), [path])
  const page = (() => {
    const note = /^\/notes\/([0-9a-f-]{36})$/.exec(path)
    if (note) return <NotePage key={note[1]} noteId={note[1]!} />
    if (path === '/notes') return <NotesPage />
    switch (section) {
      case 'keys':
        return <KeysPage />
      case 'credits':
        return <CreditsPage />
      case 'integrations':
        return <IntegrationsPage plan={session.account.plan} />
      case 'voice':
        return <VoicePage />
      case 'clients':
        return <ClientsPage />
      default:
        return <NotFound what="page" />
    }
  })()
  const title = NAV.find((n) => n.to === section)?.label
  useEffect(() => {
    document.title = `${title ?? 'Dashboard'} · Notes`
  }, [title])
  return (
    <>
      <a href="#main" class="skip-link">
        Skip to content
      </a>
      <header class="top">
        <p class="brand">Notes</p>
        <button type="button" class="menu-button" aria-expanded={menuOpen} aria-controls="nav" onClick={() => setMenuOpen(!menuOpen)}>
          Menu
        </button>
        <p class="who">
          <span>{session.person.email}</span> <span class="account">· {session.account.name}</span> · <span class="plan">{session.account.plan} plan</span>
        </p>
        <button
          type="button"
          class="quiet sign-out"
          onClick={async () => {
            await api('DELETE', '/session')
            p.onSignedOut()
          }}
        >
          Sign out
        </button>
      </header>
      <nav aria-label="Dashboard" class={`nav${menuOpen ? ' open' : ''}`} id="nav">
        <ul>
          {NAV.map((n) => (
            <li key={n.to}>
              <Link to={n.to} current={section === n.to}>
                {n.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1} key={path}>
        {page}
      </main>
    </>
  )
}

render(<App />, document.getElementById('root')!)
