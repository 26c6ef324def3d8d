/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_doctor_replay.c — the doctor fuzz target built as a corpus-replay test
 * (see fuzz_doctor_json.c). */
#define DOCTOR_FUZZ_REPLAY 1
#include "tests/doctor/fuzz_doctor_json.c"
