#include "CJACK.h"

jack_client_t *sampler_jack_client_open(const char *client_name, const char *server_name,
                                        int no_start_server, jack_status_t *status) {
    jack_options_t options = no_start_server ? JackNoStartServer : JackNullOption;
    if (server_name != NULL) {
        return jack_client_open(client_name, options | JackServerName, status, server_name);
    }
    return jack_client_open(client_name, options, status);
}
