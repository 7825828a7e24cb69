import type { EnvVariables } from './env-values.ts';
import { featureList } from './features/index.ts';
import { platformConfigs, readConfig, type Config, type FeatureConfigParsers } from './server-config.ts';

export { ConfigError, type FeatureConfigs, platformConfigs, publicUrls, serverConfigFrom, type Config, type FeatureConfigParsers } from './server-config.ts';

/** Every feature's settings parsers, from the feature list (`features/index.ts`). */
export const featureParsers = featureList.configParsers();

/** Every part of the configuration but the server-wide one: the platform's and the features'. */
export const featureConfigs = { ...platformConfigs, ...featureParsers };

/**
 * Reads the configuration from `env`, checked before anything starts so that a typo stops the
 * server with a message naming the variable rather than failing later. Every part is read, so
 * one ConfigError lists every bad variable at once. The features' parsers are the feature list's
 * unless given (a program that builds its own list passes its parsers).
 */
export function loadConfig(env: EnvVariables = process.env, parsers: FeatureConfigParsers = featureParsers): Config {
  return readConfig(env, parsers);
}
