/**
 * @module http/uws
 * The only import of uWebSockets.js, so the binding can be swapped in one place.
 */
import uws from '@trufflesuite/uws-js-unofficial';

export type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from '@trufflesuite/uws-js-unofficial';

export const createApp = uws.App;
export const closeListenSocket = uws.us_listen_socket_close;
export const listenSocketPort = uws.us_socket_local_port;
/** uWS listens with SO_REUSEPORT unless given this option: a second process would silently share the port. */
export const LISTEN_EXCLUSIVE_PORT = 1;
