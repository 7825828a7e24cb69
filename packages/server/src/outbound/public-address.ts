import ipaddr from 'ipaddr.js';

/**
 * IANA's global unicast block: every other IPv6 prefix is special-purpose or unallocated, and some
 * of them embed an IPv4 address (`::a.b.c.d`) that ipaddr.js still calls "unicast".
 */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/**
 * An address a server-side fetch may connect to, in the form to connect to, or undefined.
 *
 * An allow list rather than a block list: only what ipaddr.js classes as plain `unicast` passes
 * (its special-purpose ranges follow the IANA registries: loopback, private, link-local, CGNAT,
 * 6to4, Teredo, NAT64, site-local, documentation, benchmarking...), so a range nobody thought of
 * is refused. IPv4-mapped IPv6 is judged, and connected to, as the IPv4 address it carries.
 * Any IPv4 spelling ipaddr.js reads (`127.1`, `2130706433`, `0x7f.1`) is judged as what it means.
 */
export function publicAddress(text: string): { address: string; family: 4 | 6 } | undefined {
  if (!ipaddr.isValid(text)) return undefined;
  const address = ipaddr.process(text);
  if (address.range() !== 'unicast') return undefined;
  if (address.kind() === 'ipv4') return { address: address.toString(), family: 4 };
  if (!(address as ipaddr.IPv6).match(GLOBAL_UNICAST_V6)) return undefined;
  return { address: address.toString(), family: 6 };
}

/** True for a literal address, in any spelling ipaddr.js reads (the resolver would accept `127.1` too). */
export const isAddressLiteral = (text: string): boolean => ipaddr.isValid(text);
