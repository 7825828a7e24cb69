import { x402Contract } from '@svc/schemas';
import type { ServerDeps } from '../../deps.ts';
import { defineHandlers } from '../../http/handler-types.ts';
import { ServiceError } from '../../service-error.ts';
import { chatCompletion } from '../inference/index.ts';
import { runFunded } from './funding-step.ts';
import { discoveryDocument } from './x402-challenge.ts';
import { viemLibrary } from './x402-evm.ts';
import { x402Funding } from './x402-funding.ts';

/** The pay-per-call route (the chat handler under the x402 funding step) and its well-known document. */
export function createX402Handlers(deps: Pick<ServerDeps, 'config' | 'database' | 'log' | 'models' | 'publicUrls' | 'testSeams' | 'usage'>) {
  const config = deps.config.x402;
  const baseUrl = () => deps.publicUrls().baseUrl;
  const payTo = config.payTo;
  // The payment check recovers signatures with viem: loaded now, before the server listens, so
  // the first payer does not wait for it (nor does anyone else while it loads).
  if (payTo) viemLibrary();
  const funding = payTo
    ? x402Funding({
        sequelize: deps.database.sequelize,
        config: { ...config, payTo },
        resourceUrl: () => `${baseUrl()}${x402Contract.chat.path}`,
        discoveryUrl: () => `${baseUrl()}${x402Contract.discovery.path}`,
        log: deps.log.child({ feature: 'x402' }),
      })
    : undefined;
  const discovery = async () => {
    if (!config.resolveDefaults) return { status: 200 as const, body: discoveryDocument(config) };
    const resolved = await config.resolveDefaults(deps.testSeams?.x402DefaultsWorkerModule).catch((error: unknown) => {
      deps.log.error({ err: error }, "reading x402's default network tables in a worker failed");
      throw new ServiceError('discovery_documents_unavailable', "x402's discovery document could not be built just now; try again shortly.");
    });
    return { status: 200 as const, body: discoveryDocument(resolved) };
  };

  return defineHandlers(x402Contract, {
    async chat({ body }, request) {
      if (!funding)
        throw new ServiceError('x402_not_configured', 'Pay-per-call is not configured on this server (SVC_X402_PAY_TO is unset); see /.well-known/x402.');
      return (await runFunded(funding, (chatBody, chatRequest) => chatCompletion(deps, chatBody, chatRequest), body, request)) as never;
    },
    discovery,
    discoveryJson: discovery,
  });
}
