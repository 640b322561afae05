import Anthropic, { type APIError } from "@anthropic-ai/sdk";
import type { ModelConfig } from "../config/load.js";
import type { Logger } from "../telemetry/logger.js";
import { anthropicRequest } from "./anthropic-request.js";
import { AnthropicStreamFold } from "./anthropic-stream.js";
import type { ModelProvider, ModelReply, ModelRequest } from "./provider.js";
import { providerFetch } from "./provider-fetch.js";
import { type ProviderSettings, providerSettings } from "./provider-settings.js";
import { judgeSdkError, type SdkErrors } from "./sdk-errors.js";
import { completeStreamed } from "./streamed-call.js";

type AnthropicConfig = Extract<ModelConfig, { provider: "anthropic" }>;

const ERRORS: SdkErrors<APIError> = {
  APIError: Anthropic.APIError,
  APIConnectionError: Anthropic.APIConnectionError,
  APIConnectionTimeoutError: Anthropic.APIConnectionTimeoutError,
  answer: (error) => ({ type: error.type ?? undefined, message: error.apiMessage ?? error.message }),
};

/** Anthropic's Messages API through the official SDK, streamed. */
export class AnthropicModel implements ModelProvider {
  readonly #client: Anthropic;
  readonly #settings: ProviderSettings;

  constructor(
    private readonly config: AnthropicConfig,
    private readonly logger?: Logger,
    env?: NodeJS.ProcessEnv,
  ) {
    this.#settings = providerSettings(config);
    const key = config.apiKey?.reveal();
    this.#client = new Anthropic({
      // explicit, so no ANTHROPIC_* variable or credentials file changes where requests go
      baseURL: config.base_url ?? "https://api.anthropic.com",
      apiKey: key ?? "none",
      // a keyless server of your own gets no credential header at all
      ...(key === undefined && { defaultHeaders: { authorization: null, "x-api-key": null } }),
      fetch: providerFetch(env),
      maxRetries: 0,
      timeout: this.#settings.idleMs,
      logLevel: "off",
    });
  }

  complete(request: ModelRequest): Promise<ModelReply> {
    const params = anthropicRequest(request, this.config);
    return completeStreamed({
      request,
      settings: this.#settings,
      open: (signal) => this.#client.messages.create(params, { signal }),
      newFold: () => new AnthropicStreamFold(),
      judge: (error) => judgeSdkError(error, ERRORS, this.config.apiKey),
      model: this.config.name,
      logger: this.logger,
    });
  }
}
