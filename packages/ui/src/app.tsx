import { ErrorBoundary, LocationProvider, lazy, Route, Router, useLocation } from 'preact-iso';
import { dropFirstPaint } from './first-paint-handover.ts';
import { BASE } from './links.ts';
import { isCurrentPage, NAVIGATION } from './navigation.ts';
import { BoardPage } from './pages/board.tsx';
import { ChannelPage } from './pages/channel.tsx';
import { ItemPage } from './pages/item.tsx';
import { NotFoundPage } from './pages/not-found.tsx';
import { PostPage } from './pages/post.tsx';
import { session } from './session.ts';
import { SessionBadge } from './session-badge.tsx';
import { type NavigationEntry, TopHeader } from './components/top-header.tsx';

// The board is the first page most people open, so it is in the first load; the rest loads on demand.
const CatalogPage = lazy(() => import('./pages/catalog.tsx').then((module) => module.CatalogPage));
const ArtifactPage = lazy(() => import('./pages/artifact.tsx').then((module) => module.ArtifactPage));
const RankingsPage = lazy(() => import('./pages/rankings.tsx').then((module) => module.RankingsPage));
// Signed-in pages carry the whole client (every feature's contract): loaded only when opened.
const SignInPage = lazy(() => import('./pages/account/sign-in.tsx').then((module) => module.SignInPage));
const CallbackPage = lazy(() => import('./pages/account/sign-in.tsx').then((module) => module.CallbackPage));
const KeysPage = lazy(() => import('./pages/account/keys.tsx').then((module) => module.KeysPage));
const JobsPage = lazy(() => import('./pages/account/jobs.tsx').then((module) => module.JobsPage));
const RequestsPage = lazy(() => import('./pages/account/requests.tsx').then((module) => module.RequestsPage));
const CreditsPage = lazy(() => import('./pages/account/credits.tsx').then((module) => module.CreditsPage));
const OperatorPage = lazy(() => import('./pages/account/operator.tsx').then((module) => module.OperatorPage));
const OperatorKeysPage = lazy(() => import('./pages/operator/operator-keys.tsx').then((module) => module.OperatorKeysPage));
const OperatorUsagePage = lazy(() => import('./pages/operator/operator-usage.tsx').then((module) => module.OperatorUsagePage));

const SIGNED_IN_NAVIGATION = [
  { href: `${BASE}keys`, label: 'Keys', for: ['oauth'] },
  { href: `${BASE}credits`, label: 'Credits', for: ['oauth'] },
  { href: `${BASE}jobs`, label: 'Jobs', for: ['oauth', 'operator', 'key'] },
  { href: `${BASE}requests`, label: 'Requests', for: ['oauth', 'operator', 'key'] },
  { href: `${BASE}operator`, label: 'Operator', for: ['operator'], also: [`${BASE}operator/`] },
];

/** A navigation link that says when it is the page shown (`aria-current="page"`), for the eye and for screen readers. */
function NavLink({ href, label, also = [] }: NavigationEntry) {
  const { path } = useLocation();
  const current = isCurrentPage(path, href, also);
  return (
    <a href={href} aria-current={current ? 'page' : undefined}>
      {label}
    </a>
  );
}

/** The path this page was opened at, which the server may have drawn a first paint of. */
const OPENED_AT = location.pathname;

/**
 * A route change: a page other than the one opened (a link followed in the first paint before the
 * app took over) has no first paint, so it is dropped; then focus moves to the new heading.
 */
function onRouteChange(url: string) {
  if (new URL(url, location.origin).pathname !== OPENED_AT) dropFirstPaint();
  focusMain();
}

/** Moves focus to the page's heading after a navigation, so keyboard and screen-reader users start at the new content. */
function focusMain() {
  requestAnimationFrame(() => {
    const heading = document.querySelector<HTMLElement>('main h1');
    if (!heading) return;
    heading.tabIndex = -1;
    heading.focus();
  });
}

export function App() {
  return (
    <LocationProvider scope={BASE}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <TopHeader
        entries={[...NAVIGATION, ...(session.value ? SIGNED_IN_NAVIGATION.filter((entry) => entry.for.includes(session.value!.kind)) : [])]}
        link={NavLink}
        session={<SessionBadge />}
      />
      <main id="main" tabIndex={-1}>
        <ErrorBoundary>
          <Router onRouteChange={onRouteChange}>
            <Route path={BASE} component={BoardPage} />
            <Route path={`${BASE}channel`} component={ChannelPage} />
            <Route path={`${BASE}item/:id`} component={ItemPage} />
            <Route path={`${BASE}post`} component={PostPage} />
            <Route path={`${BASE}catalog`} component={CatalogPage} />
            <Route path={`${BASE}artifact`} component={ArtifactPage} />
            <Route path={`${BASE}rankings`} component={RankingsPage} />
            <Route path={`${BASE}sign-in`} component={SignInPage} />
            <Route path={`${BASE}callback`} component={CallbackPage} />
            <Route path={`${BASE}keys`} component={KeysPage} />
            <Route path={`${BASE}credits`} component={CreditsPage} />
            <Route path={`${BASE}jobs`} component={JobsPage} />
            <Route path={`${BASE}requests`} component={RequestsPage} />
            <Route path={`${BASE}operator`} component={OperatorPage} />
            <Route path={`${BASE}operator/keys`} component={OperatorKeysPage} />
            <Route path={`${BASE}operator/usage`} component={OperatorUsagePage} />
            <Route default component={NotFoundPage} />
          </Router>
        </ErrorBoundary>
      </main>
    </LocationProvider>
  );
}
