import type { MathJsInstance, MathNode } from 'mathjs';
import type { CalculateResult } from '@svc/schemas';
import { ServiceError } from '../../../service-error.ts';

/**
 * A mathjs instance on plain doubles; the parser only reads, nothing user-given is executed as
 * code. This module runs in the job operations worker (job-operations-worker.ts), never on the
 * event loop: loading mathjs holds its thread 1.2-1.8 s, and it is about 100 MiB of resident
 * memory, which only a thread that has run a calculate item holds.
 */
let math: Promise<MathJsInstance> | undefined;
export const loadCalculator = () =>
  (math ??= import('mathjs').then(
    ({ all, create }) => create(all, { number: 'number' }),
    (error: unknown) => {
      math = undefined;
      throw error;
    },
  ));

const allowedConstants = new Set(['pi', 'e', 'tau', 'phi']);
const allowedFunctions = new Set([
  'abs',
  'sqrt',
  'cbrt',
  'exp',
  'log',
  'log10',
  'log2',
  'sin',
  'cos',
  'tan',
  'asin',
  'acos',
  'atan',
  'atan2',
  'sinh',
  'cosh',
  'tanh',
  'floor',
  'ceil',
  'round',
  'fix',
  'trunc',
  'sign',
  'min',
  'max',
  'hypot',
  'pow',
  'mod',
]);
/** Arithmetic operators only: no factorial (unbounded work), no comparisons, no bitwise, no ranges. */
const allowedOperators = new Set(['add', 'subtract', 'multiply', 'divide', 'pow', 'mod', 'unaryMinus', 'unaryPlus']);

const invalid = (why: string) => new ServiceError('calculate_invalid', `The expression is not plain arithmetic: ${why}.`);

/**
 * Checks the parsed expression against a whitelist before anything is evaluated: numbers, the
 * arithmetic operators, parentheses, four constants and the listed functions. Every other node
 * (assignment, function definition, property access, strings, matrices, ranges, units, import)
 * is refused, so the evaluator can reach nothing but numbers and math functions.
 */
function checkTree(root: MathNode): void {
  root.traverse((node, path, parent) => {
    switch (node.type) {
      case 'ConstantNode':
        if (typeof (node as unknown as { value: unknown }).value !== 'number') throw invalid('only numbers are allowed as values');
        return;
      case 'ParenthesisNode':
        return;
      case 'OperatorNode': {
        const fn = (node as unknown as { fn: string }).fn;
        if (!allowedOperators.has(fn)) throw invalid(`the operator ${(node as unknown as { op: string }).op} is not allowed`);
        return;
      }
      case 'FunctionNode': {
        const name = (node as unknown as { fn: { type: string; name?: string } }).fn;
        if (name.type !== 'SymbolNode' || !allowedFunctions.has(name.name ?? '')) throw invalid(`the function ${name.name ?? '(computed)'} is not allowed`);
        return;
      }
      case 'SymbolNode': {
        const symbol = (node as unknown as { name: string }).name;
        if (path === 'fn' && parent?.type === 'FunctionNode') return;
        if (!allowedConstants.has(symbol)) throw invalid(`the name ${symbol} is not known (constants: ${[...allowedConstants].join(', ')})`);
        return;
      }
      default:
        throw invalid(`${node.type.replace(/Node$/, '').toLowerCase()} expressions are not allowed`);
    }
  });
}

/** Evaluates one arithmetic expression safely (mathjs parser, whitelisted tree, no eval). */
export async function calculate(expression: string): Promise<CalculateResult> {
  const parser = await loadCalculator();
  let tree: MathNode;
  try {
    tree = parser.parse(expression);
  } catch (error) {
    throw invalid((error as Error).message);
  }
  checkTree(tree);
  let value: unknown;
  try {
    value = tree.compile().evaluate({});
  } catch (error) {
    throw invalid((error as Error).message);
  }
  if (typeof value !== 'number') throw new ServiceError('calculate_not_finite', 'The expression has no real value (a complex number or not a number).');
  if (!Number.isFinite(value)) throw new ServiceError('calculate_not_finite', `The expression's value is ${value}, not a finite number.`);
  return { expression, value: Object.is(value, -0) ? 0 : value };
}
