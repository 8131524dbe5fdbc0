import type { Middleware, ParameterizedContext } from 'koa';
import { accessLog as requestLog } from '../../core/http-server/index.js';
import type { Logger } from '../../core/logging/index.js';
import type { ApiState } from '../state.js';

export function accessLog(logger: Logger): Middleware<ApiState> {
  return requestLog<ParameterizedContext<ApiState>>(logger, (ctx) => ({
    requestId: ctx.state.requestId,
    organizationId: ctx.state.principal?.organizationId,
    keyId: ctx.state.principal?.keyId,
    errorCode: ctx.state.errorCode,
  }));
}
