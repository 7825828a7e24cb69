import { ErrorBoundary, LocationProvider, lazy, Route, Router } from 'preact-iso';
import { BASE } from './links.ts';
import { BoardPage } from './pages/board.tsx';
import { ChannelPage } from './pages/channel.tsx';
import { ItemPage } from './pages/item.tsx';
import { NotFoundPage } from './pages/not-found.tsx';
import { PostPage } from './pages/post.tsx';
import { SessionBadge } from './session-badge.tsx';

// The board is the first page most people open, so it is in the first load; the rest loads on demand.
const CatalogPage = lazy(() => import('./pages/catalog.tsx').then((module) => module.CatalogPage));
const ArtifactPage = lazy(() => import('./pages/artifact.tsx').then((module) => module.ArtifactPage));
const RankingsPage = lazy(() => import('./pages/rankings.tsx').then((module) => module.RankingsPage));

const NAVIGATION = [
  { href: BASE, label: 'Board' },
  { href: `${BASE}post`, label: 'Post' },
  { href: `${BASE}catalog`, label: 'Catalog' },
  { href: `${BASE}rankings`, label: 'Rankings' },
];

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
      <header class="top">
        <a class="brand" href={BASE}>
          svc
        </a>
        <nav aria-label="Main">
          <ul>
            {NAVIGATION.map((entry) => (
              <li key={entry.href}>
                <a href={entry.href}>{entry.label}</a>
              </li>
            ))}
          </ul>
        </nav>
        <SessionBadge />
      </header>
      <main id="main" tabIndex={-1}>
        <ErrorBoundary>
          <Router onRouteChange={focusMain}>
            <Route path={BASE} component={BoardPage} />
            <Route path={`${BASE}channel`} component={ChannelPage} />
            <Route path={`${BASE}item/:id`} component={ItemPage} />
            <Route path={`${BASE}post`} component={PostPage} />
            <Route path={`${BASE}catalog`} component={CatalogPage} />
            <Route path={`${BASE}artifact`} component={ArtifactPage} />
            <Route path={`${BASE}rankings`} component={RankingsPage} />
            <Route default component={NotFoundPage} />
          </Router>
        </ErrorBoundary>
      </main>
    </LocationProvider>
  );
}
