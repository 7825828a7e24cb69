/** Where svc-server serves the web console on the base surface (`SVC_UI=off` turns it off). */
export const CONSOLE_PATH = '/ui/';

/** The console's address on a base URL. */
export const consoleUrl = (baseUrl: string) => `${baseUrl}${CONSOLE_PATH}`;
