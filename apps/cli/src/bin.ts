console.log('capnode');
