import { readFileSync } from 'node:fs';
import test from 'ava';
import { inferenceLimits } from '@svc/schemas';
import { startInferenceServer, type InferenceServer } from './helpers/inference.ts';

/**
 * Quality on data no method was tuned on (see test/fixtures/quality/README.md), through HTTP.
 * Each test fails when the method is no better than its baseline measured in the same run, and
 * logs the figures.
 */
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`./fixtures/quality/${name}`, import.meta.url), 'utf8'));

let server: InferenceServer;
test.before(async () => {
  server = await startInferenceServer();
});
test.after.always(async () => {
  await server?.svc.close();
});

interface IrSet {
  documents: Array<{ id: string; text: string }>;
  queries: Array<{ query: string; relevant: Record<string, number> }>;
}

/** nDCG@10 with graded gains 2^rel - 1 and the usual log2 discount. */
function ndcgAt10(ranking: readonly string[], relevant: Record<string, number>): number {
  const dcg = (gains: number[]) => gains.slice(0, 10).reduce((sum, gain, rank) => sum + (2 ** gain - 1) / Math.log2(rank + 2), 0);
  const ideal = dcg(Object.values(relevant).sort((a, b) => b - a));
  return dcg(ranking.map((id) => relevant[id] ?? 0)) / ideal;
}

/** A seeded generator (mulberry32), so the random baseline is the same every run. */
function seededRandom(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let value = Math.imul(state ^ (state >>> 15), 1 | state);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

/** The mean nDCG@10 of random orders: 200 shuffles per query. */
function randomBaseline(set: IrSet): number {
  const random = seededRandom(42);
  const ids = set.documents.map((document) => document.id);
  let total = 0;
  const rounds = 200;
  for (const { relevant } of set.queries) {
    for (let round = 0; round < rounds; round++) {
      const shuffled = [...ids];
      for (let index = shuffled.length - 1; index > 0; index--) {
        const other = Math.floor(random() * (index + 1));
        [shuffled[index], shuffled[other]] = [shuffled[other]!, shuffled[index]!];
      }
      total += ndcgAt10(shuffled, relevant);
    }
  }
  return total / (rounds * set.queries.length);
}

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

test('rerank (svc-bm25): nDCG@10 on the svc-docs set beats a random order', async (t) => {
  const set: IrSet = fixture('svc-docs-ir.json');
  const scores: number[] = [];
  for (const { query, relevant } of set.queries) {
    const { status, body } = await server.post('/v1/rerank', { query, documents: set.documents.map((document) => document.text) });
    t.is(status, 200);
    scores.push(
      ndcgAt10(
        body.results.map((result: any) => set.documents[result.index]!.id),
        relevant,
      ),
    );
  }
  const bm25 = mean(scores);
  const baseline = randomBaseline(set);
  t.log(`rerank nDCG@10: svc-bm25 ${bm25.toFixed(3)}, random ${baseline.toFixed(3)} (${set.queries.length} queries, ${set.documents.length} documents)`);
  t.true(bm25 > baseline + 0.2, `svc-bm25 ${bm25} is not clearly better than random ${baseline}`);
});

test('retrieval (svc-extractive-rag): nDCG@10 of the documents its passages come from beats a random order', async (t) => {
  const set: IrSet = fixture('svc-docs-ir.json');
  const scores: number[] = [];
  for (const { query, relevant } of set.queries) {
    const { status, body } = await server.post('/v1/rag', { question: query, documents: set.documents, top_k: inferenceLimits.ragMaxTopK });
    t.is(status, 200);
    // A document ranks where its best passage ranks.
    const ranking = [...new Set<string>(body.passages.map((passage: any) => passage.document_id))];
    scores.push(ndcgAt10(ranking, relevant));
  }
  const retrieval = mean(scores);
  const baseline = randomBaseline(set);
  t.log(`retrieval nDCG@10: svc-extractive-rag ${retrieval.toFixed(3)}, random ${baseline.toFixed(3)}`);
  t.true(retrieval > baseline + 0.2, `retrieval ${retrieval} is not clearly better than random ${baseline}`);
});

test('sentiment (svc-lexical-classifier): accuracy on the UCI labelled sentences beats the majority class', async (t) => {
  for (const name of ['amazon', 'imdb', 'yelp']) {
    const sentences: Array<{ text: string; class: 0 | 1 }> = fixture(`${name}.json`);
    let correct = 0;
    for (let start = 0; start < sentences.length; start += inferenceLimits.classifyMaxTexts) {
      const batch = sentences.slice(start, start + inferenceLimits.classifyMaxTexts);
      // The set is binary: ask for the task's own two polar labels (the lexicon's method, neutral left out).
      const { status, body } = await server.post('/v1/classify', {
        task: 'sentiment',
        inputs: batch.map((sentence) => sentence.text),
        labels: ['positive', 'negative'],
      });
      t.is(status, 200);
      body.results.forEach((result: any, index: number) => (correct += Number((result.label === 'positive' ? 1 : 0) === batch[index]!.class)));
    }
    const accuracy = correct / sentences.length;
    const positives = sentences.filter((sentence) => sentence.class === 1).length;
    const majority = Math.max(positives, sentences.length - positives) / sentences.length;
    t.log(`sentiment accuracy on ${name}: ${accuracy.toFixed(3)} against majority class ${majority.toFixed(3)} (${sentences.length} sentences)`);
    t.true(accuracy > majority + 0.1, `${name}: ${accuracy} is not clearly better than the majority class ${majority}`);
  }
});
