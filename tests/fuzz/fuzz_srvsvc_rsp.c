/* fuzz_srvsvc_rsp.c - libFuzzer target: what a hostile server can put in the srvsvc pipe. The input
 * is the pipe's bytes for one call: DCE/RPC response fragments (C706 12.6.4.10) or a fault, joined
 * (dcerpc_response_collect), then the stub as NetrShareEnum level 1 (MS-SRVS 3.1.4.8); the same
 * bytes as a bind_ack (12.6.4.4). The call id is taken from the input, so that mutations reach
 * past the header check. Seeds: responses captured from Samba 4.17 (the test harness's shares,
 * and 64 shares in four fragments) and hand-built ones. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/rpc.h"
#include "util/le.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint32_t call_id = size >= DCERPC_HDR_LEN ? le32_at(data + 12) : 0;
  struct dcerpc_bind_ack a;
  (void)dcerpc_bind_ack_decode(data, size, call_id, &a);
  uint8_t *stub = NULL;
  size_t stub_len = 0;
  uint32_t fault = 0;
  int rc = dcerpc_response_collect(data, size, call_id, &stub, &stub_len, &fault);
  if (rc == 0 && !fault && (!stub || stub_len > size)) abort(); /* a stub is never longer than its PDUs */
  if (rc != 0 || !stub) return 0;
  struct srvsvc_enum e;
  if (srvsvc_share_enum_decode(stub, stub_len, &e) == 0) {
    if (e.n && !e.shares) abort();
    for (uint32_t i = 0; i < e.n; i++)
      if (!e.shares[i].name || !e.shares[i].comment || strlen(e.shares[i].name) > stub_len) abort();
    srvsvc_enum_free(&e);
  } else if (e.shares || e.n) {
    abort(); /* a failed decode holds nothing */
  }
  free(stub);
  return 0;
}
