import OpenAI, { type APIError } from "openai";
import type { ModelConfig } from "../config/load.js";
import type { Logger } from "../telemetry/logger.js";
import { isOfficialOpenAI, openAIRequest } from "./openai-request.js";
import { OpenAIStreamFold } from "./openai-stream.js";
import type { ModelProvider, ModelReply, ModelRequest } from "./provider.js";
import { providerFetch } from "./provider-fetch.js";
import { type ProviderSettings, providerSettings } from "./provider-settings.js";
import { judgeSdkError, type SdkErrors } from "./sdk-errors.js";
import { completeStreamed } from "./streamed-call.js";

type OpenAIConfig = Extract<ModelConfig, { provider: "openai" }>;

const ERRORS: SdkErrors<APIError> = {
  APIError: OpenAI.APIError,
  APIConnectionError: OpenAI.APIConnectionError,
  APIConnectionTimeoutError: OpenAI.APIConnectionTimeoutError,
  answer: (error) => ({
    type: error.type ?? undefined,
    code: error.code ?? undefined,
    message: (error.error as { message?: unknown } | undefined)?.message?.toString() ?? error.message,
  }),
};

/**
 * OpenAI's Chat Completions API through the official SDK, streamed; with `base_url`, any server
 * that speaks it (vLLM, Ollama, llama.cpp, LM Studio, OpenRouter).
 */
export class OpenAIModel implements ModelProvider {
  readonly #client: OpenAI;
  readonly #settings: ProviderSettings;
  readonly #official: boolean;

  constructor(
    private readonly config: OpenAIConfig,
    private readonly logger?: Logger,
    env?: NodeJS.ProcessEnv,
  ) {
    this.#settings = providerSettings(config);
    this.#official = isOfficialOpenAI(config.base_url);
    const key = config.apiKey?.reveal();
    this.#client = new OpenAI({
      // explicit, so no OPENAI_* variable changes where requests go or what they carry
      baseURL: config.base_url ?? "https://api.openai.com/v1",
      // the SDK insists on a key; a keyless server of your own gets no Authorization header at all
      apiKey: key ?? "none",
      ...(key === undefined && { defaultHeaders: { authorization: null } }),
      organization: null,
      project: null,
      fetch: providerFetch(env),
      maxRetries: 0,
      timeout: this.#settings.idleMs,
      logLevel: "off",
    });
  }

  complete(request: ModelRequest): Promise<ModelReply> {
    const params = openAIRequest(request, {
      ...this.config,
      official: this.#official,
      images: this.config.image_input ?? this.#official,
    });
    return completeStreamed({
      request,
      settings: this.#settings,
      open: (signal) => this.#client.chat.completions.create(params, { signal }),
      newFold: () => new OpenAIStreamFold(),
      judge: (error) => judgeSdkError(error, ERRORS, this.config.apiKey),
      model: this.config.name,
      logger: this.logger,
    });
  }
}
