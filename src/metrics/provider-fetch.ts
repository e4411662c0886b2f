import { observeProviderRequest, type ProviderOutcome } from './metrics.ts';

/**
 * `fetch` for the provider clients, counted and timed per provider and outcome
 * (leadintake_provider_requests_total). Behaves exactly like fetch: it returns or throws the same.
 */
export async function providerFetch(provider: string, url: string | URL, init: RequestInit): Promise<Response> {
  const started = performance.now();
  let outcome: ProviderOutcome = 'network_error';
  try {
    const res = await fetch(url, init);
    outcome = res.status >= 500 ? 'server_error' : res.status >= 400 ? 'client_error' : 'ok';
    return res;
  } catch (err) {
    if (err instanceof DOMException && (err.name === 'TimeoutError' || err.name === 'AbortError')) outcome = 'timeout';
    throw err;
  } finally {
    observeProviderRequest(provider, outcome, (performance.now() - started) / 1000);
  }
}
