import { useTitle } from '../hooks.ts';
import { BASE } from '../links.ts';

export function NotFoundPage() {
  useTitle('Not found');
  return (
    <>
      <h1>No such page</h1>
      <p>
        The console has no page at this address. <a href={BASE}>Go to the board</a>.
      </p>
    </>
  );
}
