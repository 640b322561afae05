/** The token for a tool service from `--token-env NAME` (preferred: it stays out of `ps` and shell history) or `--token VALUE`. */
export function toolToken(
  values: { "token-env"?: string | undefined; token?: string | undefined },
  env: NodeJS.ProcessEnv,
): { token: string } | { problem: string } {
  if (values.token !== undefined && values["token-env"] !== undefined) {
    return { problem: "pass --token-env or --token, not both" };
  }
  if (values.token !== undefined) {
    return values.token === "" ? { problem: "--token must not be empty" } : { token: values.token };
  }
  const name = values["token-env"] ?? "BRAIN_TOOLS_KEY";
  const token = env[name];
  if (!token) {
    return {
      problem: `the environment variable ${name} is not set; set it to the service's token, or pass --token-env NAME`,
    };
  }
  return { token };
}
