// The mutator orval's axios client calls for every request (orval's way to configure axios): the
// generated function gives the URL, method, Content-Type and body; this sends it and answers the data.
import axios, { type AxiosRequestConfig } from 'axios';

export const http = <T>(config: AxiosRequestConfig, options?: AxiosRequestConfig): Promise<T> =>
  axios.request<T>({ ...config, ...options }).then((response) => response.data);
