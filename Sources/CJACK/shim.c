#include "CJACK.h"

jack_client_t *sampler_jack_client_open(const char *client_name, const char *server_name,
                                        int flags, jack_status_t *status) {
    /* flags: 1 never start a server; 2 the exact name or fail (no "-01" suffix). */
    jack_options_t options = (flags & 1) ? JackNoStartServer : JackNullOption;
    if (flags & 2) options |= JackUseExactName;
    if (server_name != NULL) {
        return jack_client_open(client_name, options | JackServerName, status, server_name);
    }
    return jack_client_open(client_name, options, status);
}
