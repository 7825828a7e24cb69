import { createContext } from 'preact';
import { useContext, useEffect, useMemo, useState } from 'preact/hooks';

export type ModelCardRender = (text: string) => string;

/**
 * How a card's HTML is made where it must be made at once: the server's first paint
 * (first-paint.tsx) provides model-card-html.ts' renderer, since it draws in one synchronous pass.
 * In the browser there is none, and the card loads it on demand.
 */
export const ModelCardRenderer = createContext<ModelCardRender | undefined>(undefined);

let loadedRender: ModelCardRender | undefined;

/**
 * The card the server drew in this page's first paint, or undefined. It is the same renderer's
 * HTML of the same README (the first paint and the app's first render read the same answers), so
 * the app takes it over as it is: the artifact page's first load needs no micromark at all.
 */
function firstPaintedCard(): string | undefined {
  if (typeof document === 'undefined') return undefined;
  return document.querySelector('#first-paint [data-testid="model-card"]')?.innerHTML;
}

/** An artifact's README rendered as its model card (model-card-html.ts says how, and why it is safe). */
export function ModelCard({ text }: { text: string }) {
  const provided = useContext(ModelCardRenderer);
  const [render, setRender] = useState<ModelCardRender | undefined>(() => provided ?? loadedRender);
  // Taken at the first render only: the first paint is gone once the app has taken the page over.
  const [firstPainted] = useState(() => (render ? undefined : { text, html: firstPaintedCard() }));
  const reused = firstPainted?.html !== undefined && firstPainted.text === text ? firstPainted.html : undefined;
  useEffect(() => {
    if (render || reused !== undefined) return;
    let current = true;
    void import('./model-card-html.ts').then(({ modelCardHtml }) => {
      loadedRender = modelCardHtml;
      if (current) setRender(() => modelCardHtml);
    });
    return () => {
      current = false;
    };
  }, [render, reused]);
  const html = useMemo(() => (render ? render(text) : reused), [render, text, reused]);
  if (html === undefined)
    return (
      <div class="model-card" data-testid="model-card" aria-busy="true">
        <p class="meta">Loading the model card…</p>
      </div>
    );
  // The HTML is micromark's output with raw HTML escaped, never the text itself.
  return <div class="model-card" data-testid="model-card" dangerouslySetInnerHTML={{ __html: html }} />;
}
