/**
 * @module http/routes/model
 * POST /{environment}/model/rebuild: rebuilds the environment's trained model now, in the trainer
 * worker (never on this thread), and answers once it serves: its version, size, build time and
 * working memory. The model it answers with read every event accepted before the request: a build
 * already running (an automatic one may have started on part of them) is waited for, then one
 * more runs, shared by the requests that waited. A failed build answers 500
 * `model-build-failed`; the previous model keeps serving.
 */
import type { Config } from '../../config/types.ts';
import { E } from '../../domain/errors.ts';
import type { ModelTrainer } from '../../main-thread/model-trainer.ts';
import { environmentOf } from '../environment.ts';
import { authorize, type Authorizer } from '../auth.ts';
import { sendJson, type StatusMap } from '../respond.ts';
import type { HttpServer } from '../server.ts';

const STATUS_REBUILD: StatusMap = { unauthorized: 401 };

export interface ModelRoutesDeps {
  trainer: ModelTrainer;
  auth: Authorizer;
  environments: Config['environments'];
}

export function registerModelRoutes(server: HttpServer, deps: ModelRoutesDeps): void {
  server.route('post', '/api/:environment/model/rebuild', { status: STATUS_REBUILD }, async (ex, req) => {
    const environment = req.params[0] ?? '';
    await authorize(deps.auth, req.authorization, environment);
    environmentOf(deps.environments, environment);
    const result = await deps.trainer.rebuild(environment, 'cover');
    if (result.status === 'failed') throw E.modelBuildFailed(`The trained model of '${environment}' could not be built: ${result.error}`);
    if (result.status === 'skipped') {
      sendJson(ex, 200, { environment, status: 'skipped', reason: result.reason });
      return;
    }
    const m = result.meta;
    sendJson(ex, 200, {
      environment,
      status: 'built',
      version: m.version,
      method: m.method,
      items: m.items,
      users: m.users,
      interactions: m.interactions,
      events_position: m.eventsPosition,
      build_ms: m.buildMs,
      memory_bytes: m.memoryBytes,
    });
  });
}
