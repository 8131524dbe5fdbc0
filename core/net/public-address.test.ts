import { describe, expect, it } from 'vitest';
import { publicAddressBlock } from './public-address.js';

describe('publicAddressBlock', () => {
  it('when an address is IPv4, then it is its own block, also written as IPv6 in either form', () => {
    for (const address of ['203.0.113.9', '::ffff:203.0.113.9', '::ffff:cb00:7109']) expect(publicAddressBlock(address), address).toBe('203.0.113.9');
  });

  it('when an address is IPv6, then its block is its /64, the same however the address is written', () => {
    for (const address of ['2a01:4f8:1:2::1', '2a01:04f8:0001:0002:0003:4:5:6', '2a01:4f8:1:2:ffff:ffff:ffff:ffff', '2a01:4f8:1:2:3:4:1.2.3.4', '2a01:4f8:1:2::1%eth0']) {
      expect(publicAddressBlock(address), address).toBe('2a01:4f8:1:2::/64');
    }
    expect(publicAddressBlock('2a01:4f8::1')).toBe('2a01:4f8:0:0::/64');
    expect(publicAddressBlock('2a01:4f8:0:1::1')).toBe('2a01:4f8:0:1::/64');
  });

  it('when an address is not public (private, loopback, link-local, mapped private) or not an address, then it has no block', () => {
    for (const address of ['10.0.0.1', '127.0.0.1', '::1', 'fe80::1', 'fd00::1', '::ffff:10.0.0.1', 'not-an-address', '']) expect(publicAddressBlock(address), address).toBeNull();
  });
});
