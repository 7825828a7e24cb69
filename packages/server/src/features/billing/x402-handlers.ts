import { x402Contract } from '@svc/schemas';
import type { ServerDeps } from '../../deps.ts';
import { defineHandlers } from '../../http/handler-types.ts';
import { ServiceError } from '../../http/service-error.ts';
import { chatCompletion } from '../inference/chat.ts';
import { runFunded } from './funding-step.ts';
import { discoveryDocument } from './x402-challenge.ts';
import { x402Funding } from './x402-funding.ts';

/** The pay-per-call route (the chat handler under the x402 funding step) and its well-known document. */
export function createX402Handlers(deps: ServerDeps) {
  const config = deps.config.x402;
  const baseUrl = () => deps.publicUrls().baseUrl;
  const payTo = config.payTo;
  const funding = payTo
    ? x402Funding({
        sequelize: deps.database.sequelize,
        config: { ...config, payTo },
        resourceUrl: () => `${baseUrl()}${x402Contract.chat.path}`,
        discoveryUrl: () => `${baseUrl()}${x402Contract.discovery.path}`,
        log: deps.log.child({ feature: 'x402' }),
      })
    : undefined;
  const discovery = async () => ({ status: 200 as const, body: discoveryDocument(config) });

  return defineHandlers(x402Contract, {
    async chat({ body }, request) {
      if (!funding) throw new ServiceError('x402_not_configured', 'Pay-per-call is not configured on this server (SVC_X402_PAY_TO is unset); see /.well-known/x402.');
      return (await runFunded(funding, (chatBody, chatRequest) => chatCompletion(deps, chatBody, chatRequest), body, request)) as never;
    },
    discovery,
    discoveryJson: discovery,
  });
}
