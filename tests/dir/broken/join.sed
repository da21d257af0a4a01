# Algorithm 2 broken: a reply newer than the key's current version joins the replica
# set, as an equal one does, instead of resetting it to its sender alone. Servers that
# hold older values stay in it, and reads reach them after the newer write's reply.
s/e->rset = 1u << from;/e->rset |= 1u << from;/
