import 'server-only';
import { type Attributes, SpanStatusCode, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { logger } from '~/server/log';

const log = logger('tracing');

/**
 * OpenTelemetry traces of model requests and tool calls, exported over OTLP/HTTP when an endpoint
 * is configured (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, or `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`,
 * as the OpenTelemetry SDKs read them). Without one, the API's no-op tracer makes every span free.
 * Spans are recorded when the work ends, with its real start time: the harness's control flow is
 * not wrapped in tracing contexts.
 */
let provider: TracerProvider | null = null;

export function tracesEndpoint(env: Record<string, string | undefined> = process.env): string | null {
  if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (env.OTEL_EXPORTER_OTLP_ENDPOINT) return `${env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/$/, '')}/v1/traces`;
  return null;
}

/** Starts exporting to `url` (once per process); returns whether tracing is on. */
export function startTracing(url: string | null = tracesEndpoint(), o: { delayMs?: number } = {}): boolean {
  if (provider) return true;
  if (!url) return false;
  provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': process.env.OTEL_SERVICE_NAME ?? 'paddock' }),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url }), scheduledDelayMillis: o.delayMs ?? 2_000 })],
  });
  trace.setGlobalTracerProvider(provider);
  log.info('exporting traces', { url });
  return true;
}

/** Sends what is buffered (tests; a graceful stop). */
export async function flushTracing(): Promise<void> {
  await provider?.forceFlush();
}

function record(name: string, startMs: number, attributes: Attributes, failed: boolean): void {
  const span = trace.getTracer('paddock').startSpan(name, { startTime: performance.timeOrigin + startMs, attributes });
  if (failed) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end(performance.timeOrigin + performance.now());
}

export interface ModelRequestTrace {
  sessionId: string;
  model: string;
  /** `performance.now()` when the request began. */
  startMs: number;
  outcome: 'ok' | 'error' | 'interrupted';
  ttftMs?: number | null;
  usage?: { input_tokens: number; output_tokens: number; cache_read_input_tokens?: number | null; cache_creation_input_tokens?: number | null };
}

export function traceModelRequest(t: ModelRequestTrace): void {
  record(
    'model.request',
    t.startMs,
    {
      'paddock.session_id': t.sessionId,
      'gen_ai.request.model': t.model,
      'paddock.outcome': t.outcome,
      ...(t.ttftMs != null ? { 'paddock.ttft_ms': t.ttftMs } : {}),
      ...(t.usage
        ? {
            'gen_ai.usage.input_tokens': t.usage.input_tokens,
            'gen_ai.usage.output_tokens': t.usage.output_tokens,
            'paddock.usage.cache_read_input_tokens': t.usage.cache_read_input_tokens ?? 0,
            'paddock.usage.cache_creation_input_tokens': t.usage.cache_creation_input_tokens ?? 0,
          }
        : {}),
    },
    t.outcome === 'error',
  );
}

export function traceToolCall(t: { sessionId: string; tool: string; handKind: string; startMs: number; failed: boolean }): void {
  record('tool.call', t.startMs, { 'paddock.session_id': t.sessionId, 'paddock.tool': t.tool, 'paddock.hand_kind': t.handKind, 'paddock.outcome': t.failed ? 'error' : 'ok' }, t.failed);
}
