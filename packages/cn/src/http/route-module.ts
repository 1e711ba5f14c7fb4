import type { Hono } from 'hono';
import type { ApiVersion } from '@memberkit/types';
import type { OperationRoute } from '@memberkit/core';
import type { CnServices } from '../services.js';

/**
 * What a route module gets: the CN's services, the operation wrapper of its API version
 * (session, call context, query parameters, DataONE errors with the operation's detail codes)
 * and the version. Paths are relative to `{basePath}/{version}`.
 */
export interface CnRouteContext { services: CnServices; operation: OperationRoute; version: ApiVersion }

/** Registers one API group's routes (CNCore, CNRead, CNIdentity...) on a version's sub-app. */
export type CnRouteModule = (api: Hono, ctx: CnRouteContext) => void;
