/** The svc release; kept in step with the packages' version by the changesets `fixed` group. */
export const SVC_VERSION = '0.1.0';
/** The version of the interface description (spec section 9). */
export const API_VERSION = '1.7.2';
