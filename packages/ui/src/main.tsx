// First: the schemas must be built with zod's jitless setting (see zod-jitless.ts).
import './zod-jitless.ts';
import { render } from 'preact';
import { App } from './app.tsx';
import './styles.css';

render(<App />, document.getElementById('app')!);
document.getElementById('boot')?.remove();
