import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Pool } from '../db/pool.ts';
import type { LeadService, SubmitResult } from '../leads/lead-service.ts';
import type { Clock } from '../shared/clock.ts';
import { AppError } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import { formSettingsOf, type FormSettings } from '../workspaces/form-settings.ts';
import type { WorkspaceService } from '../workspaces/workspace-service.ts';
import type { WorkspaceRow } from '../workspaces/workspace-queries.ts';
import { consentTextById } from './consent-texts.ts';
import type { IntakeLimits } from '../auth/intake-limits.ts';
import { HONEYPOT_FIELD, type FormAbuseGuard } from './form-abuse.ts';
import { FORM_CSS, FORM_JS } from './form-assets.ts';
import { ASSETS_PATH, type RenderedPage } from './form-html.ts';
import { formKeyOf } from './form-key.ts';
import { renderFormPage } from './form-page.ts';
import {
  renderDuplicate,
  renderFailed,
  renderLimited,
  renderNotFound,
  renderThankYou,
  type ResultPageContext,
} from './form-result-pages.ts';
import type { FormSettingsService } from './form-settings-service.ts';
import { FORM_STRINGS } from './form-strings.ts';
import { readForm } from './form-submission.ts';
import { TURNSTILE_RESPONSE_FIELD, type TurnstileClient } from './turnstile-client.ts';

// The hosted form (docs/INTAKE.md, "The hosted form"): GET /forms/<slug> renders it, POST
// /forms/<slug> takes it (a plain form POST: it works without JavaScript) through the abuse checks
// into LeadService.submit, the same path as the public API, and answers with a page.

export const FORM_BODY_LIMIT = 64 * 1024;

export interface FormRouteDeps {
  pool: Pool;
  clock: Clock;
  log: Logger;
  workspaces: WorkspaceService;
  leads: LeadService;
  formSettings: FormSettingsService;
  abuse: FormAbuseGuard;
  /** Per-address and per-workspace hourly limits (the workspace's from its form settings). */
  limits: IntakeLimits;
  turnstile: TurnstileClient;
  /** The hourly limit of a new form key (DEFAULT_HOURLY_LIMIT). */
  formKeyHourlyLimit: number;
}

interface SlugParams {
  slug: string;
}
interface FormQuery {
  embed?: string;
  page?: string;
}

/** A page address worth keeping: http(s), not too long, not our own form. */
function pageAddress(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > 2000) return null;
  try {
    const url = new URL(value);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    if (url.pathname.startsWith('/forms/')) return null;
    return url.href;
  } catch {
    return null;
  }
}

function send(reply: FastifyReply, status: number, page: RenderedPage, embed: boolean): FastifyReply {
  void reply
    .status(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('content-security-policy', page.csp);
  // Only the embed may be framed (its CSP says by whom: frame-ancestors).
  if (embed) void reply.removeHeader('x-frame-options');
  return reply.send(page.html);
}

export function formRoutes(deps: FormRouteDeps) {
  return async (scope: FastifyInstance): Promise<void> => {
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT },
      (_req, body, done) => done(null, new URLSearchParams(body as string)),
    );

    const asset = (type: string, text: string) => async (_req: FastifyRequest, reply: FastifyReply) =>
      reply.header('content-type', type).header('cache-control', 'public, max-age=3600').send(text);
    scope.get(`${ASSETS_PATH}/form.css`, asset('text/css; charset=utf-8', FORM_CSS));
    scope.get(`${ASSETS_PATH}/form.js`, asset('text/javascript; charset=utf-8', FORM_JS));

    const context = async (
      workspace: WorkspaceRow,
      settings: FormSettings,
      embed: boolean,
    ): Promise<ResultPageContext> => ({
      workspaceName: workspace.name,
      settings,
      strings: FORM_STRINGS[settings.language],
      logoUrl: (await deps.formSettings.hasLogo(workspace.id))
        ? `/forms/${encodeURIComponent(workspace.slug)}/logo`
        : null,
      embed,
    });
    const notFound = (reply: FastifyReply, embed: boolean) =>
      send(
        reply,
        404,
        renderNotFound({
          workspaceName: '',
          settings: formSettingsOf({}),
          strings: FORM_STRINGS.en,
          logoUrl: null,
          embed,
        }),
        embed,
      );

    scope.get<{ Params: SlugParams; Querystring: FormQuery }>('/forms/:slug', async (request, reply) => {
      const embed = request.query.embed === '1';
      const workspace = await deps.workspaces.findBySlug(request.params.slug);
      if (!workspace) return notFound(reply, embed);
      const settings = await deps.formSettings.settings(workspace.id);
      const c = await context(workspace, settings, embed);
      // The page the form is on: embed.js names it; a link to the form brings it as the Referer.
      const page = pageAddress(request.query.page) ?? pageAddress(request.headers.referer);
      return send(
        reply,
        200,
        renderFormPage({
          ...c,
          slug: workspace.slug,
          questions: workspace.agent?.questions ?? [],
          consent: await deps.formSettings.consentText(workspace, settings),
          fillToken: deps.abuse.fillToken(workspace.id, deps.clock()),
          page,
          livemode: settings.mode === 'live',
        }),
        embed,
      );
    });

    scope.post<{ Params: SlugParams; Querystring: FormQuery }>('/forms/:slug', async (request, reply) => {
      const embed = request.query.embed === '1';
      const workspace = await deps.workspaces.findBySlug(request.params.slug);
      if (!workspace) return notFound(reply, embed);
      const settings = await deps.formSettings.settings(workspace.id);
      const c = await context(workspace, settings, embed);
      const form = request.body instanceof URLSearchParams ? request.body : new URLSearchParams();
      const now = deps.clock();
      const ip = request.ip ?? '';

      // Every POST counts, whatever it holds: a flood of bad ones is a flood all the same.
      const limit = await deps.limits.admit(workspace.id, ip, settings.hourlyLimit);
      if (!limit.ok) {
        void reply.header('retry-after', String(limit.retryAfterSeconds));
        return send(reply, 429, renderLimited(c), embed);
      }
      // A bot that filled the field people never see is thanked, and nothing is stored.
      if (form.get(HONEYPOT_FIELD)) {
        deps.log.info({ workspaceId: workspace.id }, 'hosted form: honeypot filled; submission dropped');
        return send(
          reply,
          200,
          renderThankYou(c, { channel: workspace.channel, calling: false, whatsappNumber: null }),
          embed,
        );
      }

      const questions = workspace.agent?.questions ?? [];
      const read = readForm(form, settings, questions, c.strings, workspace.agent?.defaultCountry);
      const shownId = Number(form.get('_c'));
      const consent =
        (Number.isSafeInteger(shownId) && (await consentTextById(deps.pool, workspace.id, shownId))) ||
        (await deps.formSettings.consentText(workspace, settings));
      const page = pageAddress(form.get('_page'));
      const again = (formError?: string) =>
        send(
          reply,
          422,
          renderFormPage({
            ...c,
            slug: workspace.slug,
            questions,
            consent,
            fillToken: deps.abuse.fillToken(workspace.id, now),
            page,
            livemode: settings.mode === 'live',
            values: read.values,
            errors: formError ? {} : read.errors,
            ...(formError ? { formError } : {}),
          }),
          embed,
        );

      const fill = deps.abuse.checkFillToken(workspace.id, form.get('_t') ?? undefined, now);
      if (fill === 'too_fast') return again(c.strings.tooFast);
      if (fill === 'invalid') return again(c.strings.expired);
      if (Object.keys(read.errors).length > 0) return again();
      const turnstileSecret = deps.formSettings.turnstileSecret(workspace.id, settings);
      if (turnstileSecret) {
        const verdict = await deps.turnstile.verify(
          turnstileSecret,
          form.get(TURNSTILE_RESPONSE_FIELD) ?? '',
          ip || null,
        );
        if (!verdict.ok) {
          deps.log.info({ workspaceId: workspace.id, reason: verdict.reason }, 'hosted form: Turnstile refused');
          return again(c.strings.turnstileFailed);
        }
      }

      const livemode = settings.mode === 'live';
      const key = await formKeyOf(deps.pool, workspace.id, livemode, deps.formKeyHourlyLimit);
      let result: SubmitResult;
      try {
        result = await deps.leads.submit(JSON.stringify(read.body), {
          apiKeyId: key.id,
          hourlyLimit: key.hourlyLimit,
          workspace,
          livemode,
          onCounted: () => {},
          // The form's own limits above are its hourly limit: the key's (DEFAULT_HOURLY_LIMIT, shared
          // with the connected sources) would cap a form's higher `hourlyLimit` and let a busy form
          // use up the sources' hour.
          uncounted: true,
          settings: () => deps.workspaces.settingsOf(workspace),
          clientIp: ip || null,
          userAgent: request.headers['user-agent']?.slice(0, 512) ?? null,
          intake: { source: embed ? 'embed' : 'form', consentTextId: consent.id, detail: page ? { page } : null },
        });
      } catch (err) {
        const code = err instanceof AppError ? err.code : null;
        if (code === 'duplicate_phone') return send(reply, 409, renderDuplicate(c), embed);
        if (code === 'voice_dispatch_failed') return send(reply, 502, renderFailed(c), embed);
        deps.log.error({ err, workspaceId: workspace.id }, 'hosted form: submission failed');
        return send(reply, 500, renderFailed(c), embed);
      }
      const whatsapp = result.channel === 'whatsapp' ? deps.workspaces.settingsOf(workspace).whatsapp : undefined;
      return send(
        reply,
        200,
        renderThankYou(c, {
          channel: result.channel,
          calling: result.channel === 'voice' && result.providerCallId !== null,
          whatsappNumber: settings.whatsappNumber ?? (whatsapp?.provider === 'twilio' ? whatsapp.from : null),
        }),
        embed,
      );
    });

    scope.get<{ Params: SlugParams }>('/forms/:slug/logo', async (request, reply) => {
      const workspace = await deps.workspaces.findBySlug(request.params.slug);
      const logo = workspace ? await deps.formSettings.logo(workspace.id) : null;
      if (!logo) return notFound(reply, false);
      // An SVG opened on its own runs nothing: the sandbox and the CSP forbid scripts in it.
      return reply
        .header('content-type', logo.contentType)
        .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; sandbox")
        .header('cross-origin-resource-policy', 'cross-origin')
        .header('cache-control', 'public, max-age=300')
        .send(logo.bytes);
    });
  };
}
