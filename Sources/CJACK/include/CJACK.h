#ifndef CJACK_H
#define CJACK_H
#include <jack/jack.h>
#include <jack/midiport.h>
#include <jack/transport.h>

/// Opens a JACK client. `server_name` may be NULL for the default server (JACK_DEFAULT_SERVER).
/// Exists because jack_client_open is variadic and Swift cannot call variadic C functions.
jack_client_t *sampler_jack_client_open(const char *client_name, const char *server_name,
                                        int flags, jack_status_t *status);
#endif
