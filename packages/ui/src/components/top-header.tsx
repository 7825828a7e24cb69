import type { ComponentChildren, ComponentType } from 'preact';
import { BASE } from '../links.ts';

export interface NavigationEntry {
  href: string;
  label: string;
  /** The pages that belong to the entry's section (navigation.ts). */
  also?: readonly string[];
}

/**
 * The console's header: the brand, the main navigation and who is signed in. One component for
 * the app (app.tsx) and the server's first paint (first-paint.tsx), so the two cannot drift;
 * each passes its own link, since only the app knows the location as it changes (preact-iso's
 * useLocation), where the first paint knows the one path it draws.
 */
export function TopHeader({
  entries,
  link: Link,
  session,
}: {
  entries: readonly NavigationEntry[];
  link: ComponentType<NavigationEntry>;
  session: ComponentChildren;
}) {
  return (
    <header class="top">
      <a class="brand" href={BASE}>
        svc
      </a>
      <nav aria-label="Main">
        <ul>
          {entries.map((entry) => (
            <li key={entry.href}>
              <Link {...entry} />
            </li>
          ))}
        </ul>
      </nav>
      {session}
    </header>
  );
}
